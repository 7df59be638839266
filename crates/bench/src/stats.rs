//! Samples and their summary (median, minimum, maximum), and how figures are written.

/// The median and the range of a set of samples, in the samples' unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// The middle sample (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let (first, last) = (*sorted.first()?, *sorted.last()?);
        let middle = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            f64::midpoint(sorted[middle - 1], sorted[middle])
        } else {
            sorted[middle]
        };
        Some(Self {
            median,
            min: first,
            max: last,
        })
    }

    /// A summary of exactly one value (a computed figure).
    pub fn exact(value: f64) -> Self {
        Self {
            median: value,
            min: value,
            max: value,
        }
    }

    /// Every figure multiplied by `factor`.
    pub fn scaled(self, factor: f64) -> Self {
        Self {
            median: self.median * factor,
            min: self.min * factor,
            max: self.max * factor,
        }
    }
}

/// Seconds as a person reads them: `42 ms` below one second, `1.23 s` above.
pub fn seconds(value: f64) -> String {
    if value < 1.0 {
        format!("{:.0} ms", value * 1000.0)
    } else {
        format!("{value:.2} s")
    }
}

/// A summary of seconds: the median in bold, then the range.
pub fn seconds_summary(summary: Summary) -> String {
    if summary.min == summary.max {
        return format!("**{}**", seconds(summary.median));
    }
    format!(
        "**{}** ({} – {})",
        seconds(summary.median),
        seconds(summary.min),
        seconds(summary.max)
    )
}

/// A ratio such as `1.07×`.
pub fn ratio(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}×")
    } else {
        format!("{value:.2}×")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_odd_count_is_the_middle_sample() {
        let summary = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            summary,
            Summary {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
    }

    #[test]
    fn no_samples_have_no_summary() {
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn figures_are_written_in_milliseconds_below_a_second() {
        assert_eq!(seconds(0.0421), "42 ms");
        assert_eq!(seconds(1.234), "1.23 s");
        assert_eq!(
            seconds_summary(Summary::of(&[0.1, 0.2, 0.3]).unwrap()),
            "**200 ms** (100 ms – 300 ms)"
        );
        assert_eq!(seconds_summary(Summary::exact(2.0)), "**2.00 s**");
        assert_eq!(ratio(1.066), "1.07×");
        assert_eq!(ratio(48.2), "48×");
    }
}
