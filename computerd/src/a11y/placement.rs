//! Bounds in screen pixels. Toolkits report "screen" extents from what they
//! believe is their window's position; one that does not know it (GTK3
//! under some window managers, toolkits on Wayland-minded code paths)
//! reports positions relative to its window. The X window's geometry is
//! the truth: when the window's own extents sit at the origin while the X
//! window does not, every bound is moved by the window's position.

use super::WindowHint;

/// How far (pixels) a window's extents may lie from its X geometry and
/// still count as screen-placed: window manager decorations (title bar,
/// border) make the two differ a little.
const DECORATION_SLACK: i32 = 64;

/// The shift to add to every bound of a window whose own extents are
/// `frame`: `(0, 0)` when they already are screen coordinates.
pub(crate) fn window_offset(
    frame: Option<(i32, i32, u32, u32)>,
    window: &WindowHint,
) -> (i32, i32) {
    let Some((fx, fy, _, _)) = frame else {
        return (0, 0);
    };
    let near = |a: i32, b: i32| (a - b).abs() <= DECORATION_SLACK;
    let placed = near(fx, window.x) && near(fy, window.y);
    let at_origin = near(fx, 0) && near(fy, 0);
    if placed || !at_origin {
        (0, 0)
    } else {
        (window.x - fx.max(0), window.y - fy.max(0))
    }
}

pub(crate) fn shift(
    bounds: Option<(i32, i32, u32, u32)>,
    (dx, dy): (i32, i32),
) -> Option<(i32, i32, u32, u32)> {
    bounds.map(|(x, y, w, h)| (x.saturating_add(dx), y.saturating_add(dy), w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(x: i32, y: i32) -> WindowHint {
        WindowHint {
            pid: None,
            title: "T".to_string(),
            class: "c".to_string(),
            x,
            y,
            width: 400,
            height: 300,
        }
    }

    #[test]
    fn screen_placed_extents_stay() {
        // Frame extents that include a 20 px title bar above the client.
        assert_eq!(
            window_offset(Some((300, 180, 400, 320)), &window(300, 200)),
            (0, 0)
        );
    }

    #[test]
    fn window_relative_extents_move_by_the_window_position() {
        assert_eq!(
            window_offset(Some((0, 0, 400, 300)), &window(300, 200)),
            (300, 200)
        );
        assert_eq!(
            shift(Some((10, 20, 5, 5)), (300, 200)),
            Some((310, 220, 5, 5))
        );
    }

    #[test]
    fn a_window_at_the_origin_needs_nothing() {
        assert_eq!(window_offset(Some((0, 0, 400, 300)), &window(0, 0)), (0, 0));
        assert_eq!(window_offset(None, &window(300, 200)), (0, 0));
    }
}
