//! Plain-text tables and times as `list`, `status` and `destroy --idle-for` print them.
//!
//! The three tables of clusters begin alike — PROJECT, REGION, ID ([`ADDRESS_HEADERS`],
//! [`address_cells`]) — and list their rows in one order, by project, region, then ID
//! ([`ClusterName`]'s order): a script or an eye moving from one to another finds each cluster
//! where it found it before.

use clusterform_model::{ClusterName, ClusterState, UnreadLocation};
use console::{Style, measure_text_width};

/// The first columns of every table of clusters.
pub const ADDRESS_HEADERS: [&str; 3] = ["PROJECT", "REGION", "ID"];

/// `address`'s cells under [`ADDRESS_HEADERS`].
pub fn address_cells(address: &ClusterName) -> [String; 3] {
    [
        address.project().to_owned(),
        address.region().to_owned(),
        address.id().to_string(),
    ]
}

/// A table's header row: [`ADDRESS_HEADERS`], then `rest`.
pub fn cluster_headers(rest: &[&str]) -> Vec<String> {
    ADDRESS_HEADERS
        .iter()
        .chain(rest)
        .map(|header| (*header).to_owned())
        .collect()
}

/// A table's row for `address`: its [`address_cells`], then `rest`.
pub fn cluster_row(address: &ClusterName, rest: impl IntoIterator<Item = String>) -> Vec<String> {
    address_cells(address).into_iter().chain(rest).collect()
}

/// The row of a location whose List gave nothing, after the clusters: its project and
/// region, `*` for every ID, then `columns` cells (the table's after its address): `not
/// listed` for the state, `-` for the others. (What is known to be there is said elsewhere.)
pub fn unread_row(unread: &UnreadLocation, columns: usize) -> Vec<String> {
    let location = &unread.location;
    let mut row = vec![
        location.project().to_owned(),
        location.region().to_owned(),
        "*".to_owned(),
        "not listed".to_owned(),
    ];
    row.extend(std::iter::repeat_n(
        "-".to_owned(),
        columns.saturating_sub(1),
    ));
    row
}

/// A cluster's state as a table shows it: `ERROR` in bold red when `color` (a terminal), as a
/// failure stands out wherever clusterform prints one.
pub fn state_cell(state: &str, color: bool) -> String {
    if color && ClusterState::of(state) == ClusterState::Error {
        Style::new()
            .red()
            .bold()
            .force_styling(true)
            .apply_to(state)
            .to_string()
    } else {
        state.to_owned()
    }
}

/// `1 cluster`, `3 clusters`: a count and its noun, plural but for one.
pub fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Left-aligned columns separated by two spaces; rows as long as the first. Widths are what
/// a terminal shows, so a coloured cell lines up with plain ones.
pub fn table<R: AsRef<[String]>>(rows: &[R]) -> String {
    let columns = rows.first().map_or(0, |row| row.as_ref().len());
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.as_ref().get(i))
                .map(|cell| measure_text_width(cell))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .as_ref()
            .iter()
            .zip(&widths)
            .map(|(cell, width)| {
                let pad = width.saturating_sub(measure_text_width(cell));
                format!("{cell}{}", " ".repeat(pad))
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// A time the service wrote (RFC 3339, with as many fractional digits as it chose) as
/// [`format_time`] writes it, so that a column of times has one precision; text that is not
/// such a time is kept as it is.
pub fn service_time(text: &str) -> String {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|time| format_time(time.to_offset(time::UtcOffset::UTC)))
        .unwrap_or_else(|_| text.to_owned())
}

/// An RFC 3339 UTC time without sub-seconds.
pub fn format_time(time: time::OffsetDateTime) -> String {
    let time = time.replace_nanosecond(0).unwrap_or(time);
    time.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| time.to_string())
}

/// `12:00:05`: the time of day, as progress lines and `status --watch` headers show it.
pub fn time_of_day(time: time::OffsetDateTime) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        time.hour(),
        time.minute(),
        time.second()
    )
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

    #[test]
    fn an_error_state_is_red_on_a_terminal_and_its_column_still_lines_up() {
        assert_eq!(state_cell("ERROR", false), "ERROR");
        assert_eq!(state_cell("RUNNING", true), "RUNNING");
        let red = state_cell("ERROR", true);
        assert_eq!(red, "\u{1b}[31m\u{1b}[1mERROR\u{1b}[0m");
        let rows = [
            ["STATE".to_owned(), "ID".to_owned()],
            [red.clone(), "train01".to_owned()],
            ["RUNNING".to_owned(), "train02".to_owned()],
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], format!("{red}    train01"));
        assert_eq!(lines[2], "RUNNING  train02");
    }

    #[test]
    fn service_times_have_one_precision() {
        assert_eq!(
            service_time("2026-11-02T10:30:00.123456789Z"),
            "2026-11-02T10:30:00Z"
        );
        assert_eq!(service_time("2026-11-02T10:30:00Z"), "2026-11-02T10:30:00Z");
        assert_eq!(
            service_time("2026-11-02T11:30:00.5+01:00"),
            "2026-11-02T10:30:00Z"
        );
        assert_eq!(service_time("yesterday"), "yesterday");
    }
}
