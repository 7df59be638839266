//! The one budget of a refresh: the Lists of all its locations, which run at once, draw on one
//! count of pages asked for and one count of answer bytes read, so that a server that never
//! ends a List, or floods its answers, costs one budget whatever the number of locations.
//! The counts are atomics shared by the Lists: no List waits for another to count.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use clusterform_model::Location;

/// The most pages one refresh asks for, over all its Lists: 1,000 pages of up to 100 clusters,
/// far beyond any real stack's locations together.
pub const REFRESH_PAGES: usize = 1_000;

/// The most answer bytes one refresh reads, over all its Lists (their retried answers
/// included): a real page is kilobytes, and endless answers must not exhaust memory.
pub const REFRESH_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// What one refresh may read, all its Lists together ([`REFRESH_PAGES`] and
/// [`REFRESH_ANSWER_BYTES`] unless a test lowers them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshBudget {
    /// Pages asked for.
    pub pages: usize,
    /// Bytes of answers read.
    pub answer_bytes: usize,
}

impl Default for RefreshBudget {
    fn default() -> Self {
        Self {
            pages: REFRESH_PAGES,
            answer_bytes: REFRESH_ANSWER_BYTES,
        }
    }
}

/// Which total of a [`RefreshBudget`] a List passed, and what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetLimit {
    /// The pages asked for.
    Pages(usize),
    /// The bytes of answers read.
    AnswerBytes(usize),
}

impl fmt::Display for BudgetLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pages(pages) => write!(f, "{pages} pages"),
            Self::AnswerBytes(bytes) => write!(f, "{bytes} bytes of answers"),
        }
    }
}

/// The List that passed its refresh's budget, and which total it passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetSpent {
    /// The location whose List asked for the page, or read the bytes, over the total.
    pub location: Location,
    /// The total passed.
    pub limit: BudgetLimit,
}

impl fmt::Display for BudgetSpent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the List of {}/{} passed the refresh's total of {}, counted over the Lists of \
             every location together",
            self.location.project(),
            self.location.region(),
            self.limit
        )
    }
}

/// One refresh's spending of its [`RefreshBudget`], shared by its Lists. Cheap to clone:
/// clones count into the same totals.
#[derive(Debug, Clone)]
pub struct RefreshMeter {
    budget: RefreshBudget,
    spent: Arc<Spent>,
}

#[derive(Debug, Default)]
struct Spent {
    pages: AtomicUsize,
    answer_bytes: AtomicUsize,
}

impl RefreshMeter {
    /// A refresh that has read nothing yet.
    pub fn new(budget: RefreshBudget) -> Self {
        Self {
            budget,
            spent: Arc::default(),
        }
    }

    /// Counts one page that `location`'s List is about to ask for; refused once the refresh
    /// has asked for all its pages, so that no request beyond the total is sent.
    pub(crate) fn take_page(&self, location: &Location) -> Result<(), BudgetSpent> {
        let asked = self.spent.pages.fetch_add(1, Ordering::Relaxed) + 1;
        self.within(asked, BudgetLimit::Pages(self.budget.pages), location)
    }

    /// Counts `bytes` more of an answer `location`'s List is reading; refused once the
    /// refresh's answers together pass their total.
    pub(crate) fn take_bytes(&self, location: &Location, bytes: usize) -> Result<(), BudgetSpent> {
        let read = self.spent.answer_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let limit = BudgetLimit::AnswerBytes(self.budget.answer_bytes);
        self.within(read, limit, location)
    }

    fn within(
        &self,
        spent: usize,
        limit: BudgetLimit,
        location: &Location,
    ) -> Result<(), BudgetSpent> {
        let total = match limit {
            BudgetLimit::Pages(total) | BudgetLimit::AnswerBytes(total) => total,
        };
        if spent <= total {
            return Ok(());
        }
        Err(BudgetSpent {
            location: location.clone(),
            limit,
        })
    }
}

/// What one List request draws on: its refresh's meter, for the List of `location`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListCharge<'a> {
    pub(crate) meter: &'a RefreshMeter,
    pub(crate) location: &'a Location,
}

impl ListCharge<'_> {
    /// Counts `bytes` more of this List's answer.
    pub(crate) fn bytes(&self, bytes: usize) -> Result<(), BudgetSpent> {
        self.meter.take_bytes(self.location, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(region: &str) -> Location {
        Location::new("acme-ml", region).unwrap()
    }

    #[test]
    fn every_clone_counts_into_one_total_and_the_error_names_the_list_that_passed_it() {
        let meter = RefreshMeter::new(RefreshBudget {
            pages: 3,
            answer_bytes: 100,
        });
        let other = meter.clone();
        meter.take_page(&at("us-east1")).unwrap();
        other.take_page(&at("us-west1")).unwrap();
        meter.take_page(&at("us-east1")).unwrap();
        let spent = other.take_page(&at("us-west1")).unwrap_err();
        assert_eq!(spent.limit, BudgetLimit::Pages(3));
        assert_eq!(
            spent.to_string(),
            "the List of acme-ml/us-west1 passed the refresh's total of 3 pages, counted over \
             the Lists of every location together"
        );

        meter.take_bytes(&at("us-east1"), 60).unwrap();
        let spent = other.take_bytes(&at("us-west1"), 41).unwrap_err();
        assert_eq!(spent.limit, BudgetLimit::AnswerBytes(100));
        assert_eq!(spent.location, at("us-west1"));
    }
}
