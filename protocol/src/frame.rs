//! What shape a screenshot takes: its size bound, format and region, and
//! the transform from a frame's pixels back to the screen's.

use crate::error::InvalidInput;
use serde::{Deserialize, Serialize};

/// `max_side` bounds, in pixels.
pub const MAX_SIDE_MIN: u32 = 256;
pub const MAX_SIDE_MAX: u32 = 7680;
/// The host's defaults (`COMPUTER_USE_FRAME_MAX_SIDE`,
/// `COMPUTER_USE_FRAME_MAX_PIXELS`): a frame no common model shrinks
/// again, so clicks read off it land where they should.
pub const DEFAULT_MAX_SIDE: u32 = 1568;
pub const DEFAULT_MAX_PIXELS: u64 = 1_150_000;
/// JPEG quality when none is given, and its range.
pub const DEFAULT_JPEG_QUALITY: u8 = 80;
/// Encoded frames stay under this (what MCP clients accept in one image).
pub const FRAME_MAX_BYTES: usize = 1024 * 1024;
/// Frames a session remembers for `frame_id` coordinates.
pub const FRAMES_REMEMBERED: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    #[default]
    Png,
    Jpeg,
}

impl ImageFormat {
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
        }
    }
}

/// A rectangle of the screen, in screen pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// How a screenshot is shaped. Every field is optional; computerd applies
/// no bound at all when both `max_side` and `max_pixels` are missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_side: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pixels: Option<u64>,
    #[serde(default)]
    pub format: ImageFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
}

impl FrameOptions {
    /// Checks the ranges; errors name the field, the range and the fix.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        if let Some(side) = self.max_side {
            if !(MAX_SIDE_MIN..=MAX_SIDE_MAX).contains(&side) {
                return Err(InvalidInput(format!(
                    "`max_side` is {side}: use {MAX_SIDE_MIN} to {MAX_SIDE_MAX} pixels, or leave it out for the default ({DEFAULT_MAX_SIDE})"
                )));
            }
        }
        if self.max_pixels == Some(0) {
            return Err(InvalidInput(
                "`max_pixels` is 0: give at least 1 pixel".to_string(),
            ));
        }
        match (self.format, self.quality) {
            (ImageFormat::Png, Some(_)) => Err(InvalidInput(
                "`quality` applies to `format: jpeg` only; leave it out for png".to_string(),
            )),
            (ImageFormat::Jpeg, Some(q)) if !(1..=100).contains(&q) => Err(InvalidInput(format!(
                "`quality` is {q}: use 1 to 100 (default {DEFAULT_JPEG_QUALITY})"
            ))),
            _ => Ok(()),
        }
    }
}

/// `computer_observe`'s request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveRequest {
    #[serde(default)]
    pub frame: FrameOptions,
    /// Only this part of the screen (zoom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    /// Image, text view or both, and the text view's shape.
    #[serde(
        default,
        skip_serializing_if = "crate::textview::TextViewOptions::is_image_only"
    )]
    pub text: crate::textview::TextViewOptions,
    /// Always send the image, even when the screen is unchanged since the
    /// session's previous screenshot: the unchanged-frame rule must never
    /// leave an agent without a picture it needs (it lost the earlier one,
    /// or doubts it). Left out of the JSON when false, so an older
    /// computerd still reads every request that does not ask for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
}

/// How a frame's pixels map to the screen's: a screen point is
/// `region.x + frame_x / scale_x`, and likewise for y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameTransform {
    pub region: Region,
    pub frame_width: u32,
    pub frame_height: u32,
}

impl FrameTransform {
    /// The screen pixel under frame pixel `(x, y)`, or an error naming the
    /// frame's size when the point is outside it.
    pub fn to_screen(&self, x: i32, y: i32) -> Result<(i32, i32), InvalidInput> {
        if x < 0 || y < 0 || x as u32 >= self.frame_width || y as u32 >= self.frame_height {
            return Err(InvalidInput(format!(
                "point ({x}, {y}) is outside the frame, which is {}x{}: x runs 0 to {} and y 0 to {}",
                self.frame_width,
                self.frame_height,
                self.frame_width - 1,
                self.frame_height - 1
            )));
        }
        // The centre of the frame pixel, scaled back.
        let map = |v: i32, frame: u32, origin: u32, size: u32| -> i32 {
            let screen = (f64::from(v) + 0.5) * f64::from(size) / f64::from(frame);
            origin as i32 + (screen.floor() as i32).clamp(0, size as i32 - 1)
        };
        Ok((
            map(x, self.frame_width, self.region.x, self.region.width),
            map(y, self.frame_height, self.region.y, self.region.height),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transform(region: Region, fw: u32, fh: u32) -> FrameTransform {
        FrameTransform {
            region,
            frame_width: fw,
            frame_height: fh,
        }
    }

    #[test]
    fn frame_points_map_back_to_the_screen() {
        // 3840x2160 shown at 1568x882.
        let full = Region {
            x: 0,
            y: 0,
            width: 3840,
            height: 2160,
        };
        let t = transform(full, 1568, 882);
        assert_eq!(t.to_screen(0, 0).unwrap(), (1, 1));
        assert_eq!(t.to_screen(784, 441).unwrap(), (1921, 1081));
        assert_eq!(t.to_screen(1567, 881).unwrap(), (3838, 2158));
        assert!(t.to_screen(1568, 0).unwrap_err().0.contains("1568x882"));
        // A zoomed region at twice its size.
        let zoom = Region {
            x: 100,
            y: 200,
            width: 50,
            height: 40,
        };
        let t = transform(zoom, 100, 80);
        assert_eq!(t.to_screen(0, 0).unwrap(), (100, 200));
        assert_eq!(t.to_screen(99, 79).unwrap(), (149, 239));
        // Unscaled: identity.
        let t = transform(
            Region {
                x: 0,
                y: 0,
                width: 1280,
                height: 800,
            },
            1280,
            800,
        );
        assert_eq!(t.to_screen(640, 400).unwrap(), (640, 400));
    }

    #[test]
    fn options_out_of_range_name_the_field() {
        let bad = FrameOptions {
            max_side: Some(100),
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().0.contains("`max_side`"));
        let bad = FrameOptions {
            format: ImageFormat::Jpeg,
            quality: Some(0),
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().0.contains("`quality`"));
        let bad = FrameOptions {
            quality: Some(50),
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().0.contains("jpeg"));
        assert!(FrameOptions::default().validate().is_ok());
    }
}
