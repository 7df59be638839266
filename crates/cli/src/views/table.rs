//! Plain-text tables and times as `list`, `status` and `destroy --idle-for` print them.

/// Left-aligned columns separated by two spaces.
pub fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let widths: Vec<usize> = (0..N)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// An RFC 3339 UTC time without sub-seconds.
pub fn format_time(time: time::OffsetDateTime) -> String {
    let time = time.replace_nanosecond(0).unwrap_or(time);
    time.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| time.to_string())
}

/// `2026-11-30T10:05:00Z (5h2m ago)`: a time, and how long before `now` it was.
pub fn time_and_age(time: time::OffsetDateTime, now: time::OffsetDateTime) -> String {
    let seconds = u64::try_from((now - time).whole_seconds()).unwrap_or(0);
    format!(
        "{} ({} ago)",
        format_time(time),
        clusterform_model::duration::Seconds(seconds).to_units(2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let rows = [
            ["ID".to_owned(), "STATE".to_owned()],
            ["train01".to_owned(), "RUNNING".to_owned()],
        ];
        insta::assert_snapshot!(table(&rows), @r"
        ID       STATE
        train01  RUNNING
        ");
    }
}
