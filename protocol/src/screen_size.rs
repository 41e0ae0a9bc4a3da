//! A screen's size, as the host's settings, a session's settings and
//! computerd's flags spell it: `<width>x<height>`, each side within
//! [`SCREEN_SIDE_MIN`] and [`SCREEN_SIDE_MAX`]. One parser, so the host
//! refuses at start what computerd would refuse at a session's.

use crate::limits::{SCREEN_SIDE_MAX, SCREEN_SIDE_MIN};
use std::fmt;
use std::str::FromStr;

/// A screen size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenSize {
    pub width: u32,
    pub height: u32,
}

/// A screen size that is not `<width>x<height>` with sides in range; its
/// text says what to give instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("use `<width>x<height>` with sides from {SCREEN_SIDE_MIN} to {SCREEN_SIDE_MAX}, such as `1280x800`")]
pub struct BadScreenSize;

impl ScreenSize {
    /// Parses `<width>x<height>` (or `X`), spaces around either side
    /// allowed, both sides within the limits.
    pub fn parse(text: &str) -> Result<ScreenSize, BadScreenSize> {
        let (w, h) = text.trim().split_once(['x', 'X']).ok_or(BadScreenSize)?;
        let side = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|v| (SCREEN_SIDE_MIN..=SCREEN_SIDE_MAX).contains(v))
                .ok_or(BadScreenSize)
        };
        Ok(ScreenSize {
            width: side(w)?,
            height: side(h)?,
        })
    }
}

impl FromStr for ScreenSize {
    type Err = BadScreenSize;

    fn from_str(text: &str) -> Result<ScreenSize, BadScreenSize> {
        ScreenSize::parse(text)
    }
}

impl fmt::Display for ScreenSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_within_the_limits_and_print_back() {
        let size = ScreenSize::parse(" 320 x 7680 ").unwrap();
        assert_eq!(
            size,
            ScreenSize {
                width: 320,
                height: 7680
            }
        );
        assert_eq!(size.to_string(), "320x7680");
        assert_eq!(
            "1280X800".parse(),
            Ok(ScreenSize {
                width: 1280,
                height: 800
            })
        );
        for bad in ["7681x800", "319x800", "1280", "axb", "1280x", "-1x800", ""] {
            assert_eq!(ScreenSize::parse(bad), Err(BadScreenSize), "{bad:?}");
        }
        assert!(BadScreenSize.to_string().contains("1280x800"));
    }
}
