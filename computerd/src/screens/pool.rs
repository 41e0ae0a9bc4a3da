//! Screen numbers 1 to 16: the first free one is handed out, and a number is
//! free again only once its processes have exited. A number whose display
//! failed to start (another X server holds it, Xvnc exited, no X connection)
//! is skipped for a while, so one busy display does not stop every screen.

use computer_protocol::limits::SCREENS_MAX;
use computer_protocol::ScreenNumber;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a number whose start failed is not handed out again.
pub const BAD_DISPLAY_PAUSE: Duration = Duration::from_secs(60);

const SLOTS: usize = SCREENS_MAX as usize;

#[derive(Debug, Default)]
pub struct ScreenPool {
    numbers: Mutex<Numbers>,
}

#[derive(Debug, Default)]
struct Numbers {
    taken: [bool; SLOTS],
    /// Until when a number is skipped after its display failed to start.
    bad_until: [Option<Instant>; SLOTS],
}

/// A reserved number; dropping it frees the number.
#[derive(Debug)]
pub struct ScreenSlot {
    pub number: ScreenNumber,
    pool: Arc<ScreenPool>,
}

/// Why no number could be reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoFreeNumber {
    pub in_use: usize,
    /// Free numbers skipped because their display failed to start lately.
    pub failing: usize,
}

impl ScreenPool {
    pub fn new() -> Arc<ScreenPool> {
        Arc::new(ScreenPool::default())
    }

    fn numbers(&self) -> parking_lot::MutexGuard<'_, Numbers> {
        self.numbers.lock()
    }

    /// Reserves the lowest number that is free and not failing.
    pub fn reserve(self: &Arc<Self>) -> Result<ScreenSlot, NoFreeNumber> {
        self.reserve_at(Instant::now())
    }

    fn reserve_at(self: &Arc<Self>, now: Instant) -> Result<ScreenSlot, NoFreeNumber> {
        let mut numbers = self.numbers();
        let failing = |i: usize| numbers.bad_until[i].is_some_and(|until| until > now);
        let Some(index) = (0..SLOTS).find(|&i| !numbers.taken[i] && !failing(i)) else {
            let in_use = numbers.taken.iter().filter(|t| **t).count();
            return Err(NoFreeNumber {
                in_use,
                failing: SLOTS - in_use,
            });
        };
        numbers.taken[index] = true;
        numbers.bad_until[index] = None;
        Ok(ScreenSlot {
            number: ScreenNumber(index as u8 + 1),
            pool: Arc::clone(self),
        })
    }

    pub fn in_use(&self) -> usize {
        self.numbers().taken.iter().filter(|t| **t).count()
    }
}

impl ScreenSlot {
    /// Skips this number for [`BAD_DISPLAY_PAUSE`] once the slot is dropped.
    pub fn mark_failing(&self) {
        self.mark_failing_until(Instant::now() + BAD_DISPLAY_PAUSE);
    }

    fn mark_failing_until(&self, until: Instant) {
        self.pool.numbers().bad_until[self.index()] = Some(until);
    }

    fn index(&self) -> usize {
        usize::from(self.number.0) - 1
    }
}

impl Drop for ScreenSlot {
    fn drop(&mut self) {
        let index = self.index();
        self.pool.numbers().taken[index] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_the_lowest_free_number() {
        let pool = ScreenPool::new();
        let slots: Vec<_> = (0..16).map(|_| pool.reserve().unwrap()).collect();
        assert_eq!(slots[0].number, ScreenNumber(1));
        assert_eq!(slots[15].number, ScreenNumber(16));
        assert_eq!(
            pool.reserve().unwrap_err(),
            NoFreeNumber {
                in_use: 16,
                failing: 0
            }
        );
        let mut slots = slots;
        slots.remove(4);
        assert_eq!(pool.reserve().unwrap().number, ScreenNumber(5));
    }

    #[test]
    fn a_failing_number_is_skipped_until_its_pause_ends() {
        let pool = ScreenPool::new();
        let now = Instant::now();
        let first = pool.reserve_at(now).unwrap();
        first.mark_failing_until(now + Duration::from_secs(60));
        drop(first);
        assert_eq!(pool.reserve_at(now).unwrap().number, ScreenNumber(2));
        let later = now + Duration::from_secs(61);
        assert_eq!(pool.reserve_at(later).unwrap().number, ScreenNumber(1));
    }

    #[test]
    fn failing_numbers_are_told_apart_from_numbers_in_use() {
        let pool = ScreenPool::new();
        let now = Instant::now();
        let held: Vec<_> = (0..16).map(|_| pool.reserve_at(now).unwrap()).collect();
        for slot in &held[..3] {
            slot.mark_failing_until(now + Duration::from_secs(60));
        }
        drop(held);
        let kept: Vec<_> = (0..13).map(|_| pool.reserve_at(now).unwrap()).collect();
        assert_eq!(kept[0].number, ScreenNumber(4));
        assert_eq!(
            pool.reserve_at(now).unwrap_err(),
            NoFreeNumber {
                in_use: 13,
                failing: 3
            }
        );
    }
}
