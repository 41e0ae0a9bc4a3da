//! Screen numbers 1 to 16: the first free one is handed out, and a number is
//! free again only once its processes have exited.

use computer_protocol::limits::SCREENS_MAX;
use computer_protocol::ScreenNumber;
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
pub struct ScreenPool {
    taken: Mutex<[bool; SCREENS_MAX as usize]>,
}

/// A reserved number; dropping it frees the number.
#[derive(Debug)]
pub struct ScreenSlot {
    pub number: ScreenNumber,
    pool: Arc<ScreenPool>,
}

impl ScreenPool {
    pub fn new() -> Arc<ScreenPool> {
        Arc::new(ScreenPool::default())
    }

    /// Reserves the lowest free number, or `None` when all 16 are taken.
    pub fn reserve(self: &Arc<Self>) -> Option<ScreenSlot> {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        let index = taken.iter().position(|t| !t)?;
        taken[index] = true;
        Some(ScreenSlot {
            number: ScreenNumber(index as u8 + 1),
            pool: Arc::clone(self),
        })
    }

    pub fn in_use(&self) -> usize {
        let taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken.iter().filter(|t| **t).count()
    }
}

impl Drop for ScreenSlot {
    fn drop(&mut self) {
        let mut taken = self.pool.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken[usize::from(self.number.0) - 1] = false;
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
        assert!(pool.reserve().is_none());
        let mut slots = slots;
        slots.remove(4);
        assert_eq!(pool.reserve().unwrap().number, ScreenNumber(5));
    }
}
