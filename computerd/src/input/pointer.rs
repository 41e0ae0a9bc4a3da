//! Pointer actions: move, click, press, release and wheel steps.

use super::events::Events;
use super::InputError;
use crate::display::Display;
use computer_protocol::{Button, ScrollDirection};

/// X pointer button numbers.
fn button_number(button: Button) -> u8 {
    match button {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
    }
}

/// Wheel steps are presses of buttons 4 to 7.
fn wheel_button(direction: ScrollDirection) -> u8 {
    match direction {
        ScrollDirection::Up => 4,
        ScrollDirection::Down => 5,
        ScrollDirection::Left => 6,
        ScrollDirection::Right => 7,
    }
}

/// `(x, y)` as root coordinates, or why it is not on the screen.
fn on_screen(display: &Display, x: i32, y: i32) -> Result<(i16, i16), InputError> {
    match (i16::try_from(x), i16::try_from(y)) {
        (Ok(rx), Ok(ry)) if display.contains(x, y) => Ok((rx, ry)),
        _ => Err(InputError::OffScreen {
            display: display.number,
            x,
            y,
            width: display.width,
            height: display.height,
            max_x: i32::from(display.width) - 1,
            max_y: i32::from(display.height) - 1,
        }),
    }
}

/// `Some((x, y))` when both are given; refuses half a point.
fn optional_point(x: Option<i32>, y: Option<i32>) -> Result<Option<(i32, i32)>, InputError> {
    match (x, y) {
        (Some(x), Some(y)) => Ok(Some((x, y))),
        (None, None) => Ok(None),
        _ => Err(InputError::HalfPoint),
    }
}

/// Checks the point (if any) before anything is sent, then moves there.
fn start<'d>(
    display: &'d Display,
    x: Option<i32>,
    y: Option<i32>,
) -> Result<Events<'d>, InputError> {
    let point = optional_point(x, y)?
        .map(|(x, y)| on_screen(display, x, y))
        .transpose()?;
    let mut events = Events::new(display);
    if let Some((x, y)) = point {
        events.motion(x, y)?;
    }
    Ok(events)
}

pub fn move_to(display: &Display, x: i32, y: i32) -> Result<(), InputError> {
    start(display, Some(x), Some(y))?.confirm()
}

pub fn click(display: &Display, x: i32, y: i32, button: Button) -> Result<(), InputError> {
    let mut events = start(display, Some(x), Some(y))?;
    events.button(button_number(button), true)?;
    events.button(button_number(button), false)?;
    events.confirm()
}

/// Presses (`press`) or releases `button`, moving first when given a point.
pub fn button(
    display: &Display,
    button: Button,
    press: bool,
    x: Option<i32>,
    y: Option<i32>,
) -> Result<(), InputError> {
    let mut events = start(display, x, y)?;
    events.button(button_number(button), press)?;
    events.confirm()
}

pub fn scroll(
    display: &Display,
    direction: ScrollDirection,
    steps: u32,
    x: Option<i32>,
    y: Option<i32>,
) -> Result<(), InputError> {
    let mut events = start(display, x, y)?;
    for _ in 0..steps {
        events.button(wheel_button(direction), true)?;
        events.button(wheel_button(direction), false)?;
    }
    events.confirm()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_a_point_is_refused() {
        assert!(matches!(
            optional_point(Some(1), None),
            Err(InputError::HalfPoint)
        ));
        assert!(matches!(
            optional_point(None, Some(1)),
            Err(InputError::HalfPoint)
        ));
        assert_eq!(optional_point(None, None).unwrap(), None);
        assert_eq!(optional_point(Some(3), Some(4)).unwrap(), Some((3, 4)));
    }

    #[test]
    fn buttons_and_wheel_directions() {
        assert_eq!(button_number(Button::Left), 1);
        assert_eq!(button_number(Button::Middle), 2);
        assert_eq!(button_number(Button::Right), 3);
        assert_eq!(wheel_button(ScrollDirection::Up), 4);
        assert_eq!(wheel_button(ScrollDirection::Down), 5);
        assert_eq!(wheel_button(ScrollDirection::Left), 6);
        assert_eq!(wheel_button(ScrollDirection::Right), 7);
    }
}
