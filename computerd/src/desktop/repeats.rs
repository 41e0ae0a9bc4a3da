//! The unchanged-batch rule: identical batches of pointer, scroll and key
//! actions that leave the screen unchanged are counted, so the fourth in a
//! row can be refused.

/// Tracks identical batches of pointer, scroll and key actions that leave
/// the screen unchanged, so the fourth in a row can be refused.
#[derive(Debug, Default)]
pub struct RepeatTracker {
    /// The last repeatable batch, as its JSON text.
    last_batch: Option<String>,
    /// How many identical batches in a row left the screen unchanged.
    unchanged_streak: u32,
}

impl RepeatTracker {
    /// True when `batch` would be the next identical one after `limit`
    /// unchanged repeats.
    pub fn should_refuse(&self, batch: &str, limit: u32) -> bool {
        self.last_batch.as_deref() == Some(batch) && self.unchanged_streak >= limit
    }

    /// Records a batch that ran. `repeatable` is false for batches that type
    /// text or focus windows; they reset the count.
    pub fn record(&mut self, batch: Option<String>, screen_changed: bool) {
        match batch {
            Some(batch) => {
                let same = self.last_batch.as_deref() == Some(batch.as_str());
                self.unchanged_streak = match (same, screen_changed) {
                    (_, true) => 0,
                    (true, false) => self.unchanged_streak + 1,
                    (false, false) => 1,
                };
                self.last_batch = Some(batch);
            }
            None => {
                self.last_batch = None;
                self.unchanged_streak = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourth_identical_unchanged_batch_is_refused() {
        let mut t = RepeatTracker::default();
        let b = "scroll".to_string();
        for _ in 0..3 {
            assert!(!t.should_refuse(&b, 3));
            t.record(Some(b.clone()), false);
        }
        assert!(t.should_refuse(&b, 3));
        assert!(!t.should_refuse("other", 3));
    }

    #[test]
    fn a_change_or_another_batch_resets() {
        let mut t = RepeatTracker::default();
        let b = "key".to_string();
        t.record(Some(b.clone()), false);
        t.record(Some(b.clone()), false);
        t.record(Some(b.clone()), true);
        t.record(Some(b.clone()), false);
        assert!(!t.should_refuse(&b, 3));
        t.record(None, false);
        t.record(Some(b.clone()), false);
        t.record(Some(b.clone()), false);
        assert!(!t.should_refuse(&b, 3));
        t.record(Some(b.clone()), false);
        assert!(t.should_refuse(&b, 3));
    }
}
