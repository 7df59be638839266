//! The one numbering of a create's capacity fallback chain, as every user-facing word gives it
//! (plan, apply, events, status): attempt 1 is the pools as declared, attempt k+1 runs each
//! pool's `fallback` k (or its last, when it has fewer). The journal keeps an attempt by its
//! position in the chain (from 0) and the applied record by its fallback (from 1); both are
//! read into this type, so no caller converts by hand.

use std::fmt;
use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};

/// One create of a fallback chain, numbered from 1; written as that number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Attempt(NonZeroUsize);

impl Attempt {
    /// Attempt 1: the pools as declared.
    pub const DECLARED: Self = Self(NonZeroUsize::MIN);

    /// The attempt at `position` in the chain, from 0 (the journal's numbering).
    pub fn at(position: usize) -> Self {
        Self(NonZeroUsize::MIN.saturating_add(position))
    }

    /// The attempt that runs `fallback` k (from 1; the applied record's numbering); `None` for
    /// 0, which names no fallback.
    pub fn of_fallback(fallback: usize) -> Option<Self> {
        fallback.checked_sub(1).map(|k| Self::at(k + 1))
    }

    /// Its position in the chain, from 0.
    pub fn position(self) -> usize {
        self.0.get() - 1
    }

    /// Its number, from 1.
    pub fn number(self) -> usize {
        self.0.get()
    }

    /// The `fallback` it runs, from 1; `None` for the attempt as declared.
    pub fn fallback(self) -> Option<usize> {
        Some(self.position()).filter(|&k| k > 0)
    }

    /// The attempt after it.
    #[must_use]
    pub fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

/// `attempt 2`.
impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt {}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_s_positions_the_record_s_fallbacks_and_the_words_agree() {
        let second = Attempt::at(1);
        assert_eq!(second.number(), 2);
        assert_eq!(second.position(), 1);
        assert_eq!(second.fallback(), Some(1), "attempt 2 runs fallback 1");
        assert_eq!(Attempt::of_fallback(1), Some(second));
        assert_eq!(Attempt::of_fallback(0), None);
        assert_eq!(Attempt::DECLARED.fallback(), None);
        assert_eq!(Attempt::DECLARED.next(), second);
        assert_eq!(second.to_string(), "attempt 2");
        assert_eq!(serde_json::to_value(second).unwrap(), 2);
        assert!(serde_json::from_value::<Attempt>(serde_json::json!(0)).is_err());
    }
}
