//! computer_act's effects in words: one line per pointer or key action that
//! changed nothing, so an agent notices a missed click without another
//! screenshot, and one for the windows, focus and page that changed.

use computer_protocol::{ActionEffect, ActionOutcome};

/// The lines for a batch's effects (empty when there is nothing to tell),
/// each ending with a newline.
pub fn effect_lines(outcomes: &[ActionOutcome], effects: &[ActionEffect]) -> String {
    let mut lines = String::new();
    for effect in effects {
        let Some(outcome) = outcomes.iter().find(|o| o.index == effect.index) else {
            continue;
        };
        if !outcome.ok {
            continue;
        }
        let what = match &outcome.at {
            Some(at) => format!("the {} at {},{}", outcome.kind, at.x, at.y),
            None => format!("the {}", outcome.kind),
        };
        let subject = format!("Action {} ({what})", effect.index);
        // "Nothing changed" is worth a line after input an agent expects an
        // answer to; waits and focus say nothing.
        if effect.changed == Some(false) && outcome.kind.is_input() {
            lines.push_str(&format!(
                "{subject} changed nothing on screen in {} ms.\n",
                effect.watched_ms
            ));
        } else if effect.has_news() {
            lines.push_str(&format!("{subject}: {}.\n", news(effect)));
        }
    }
    lines
}

fn news(effect: &ActionEffect) -> String {
    let quoted = |titles: &[String]| {
        titles
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !effect.windows_opened.is_empty() {
        parts.push(format!("opened {}", quoted(&effect.windows_opened)));
    }
    if !effect.windows_closed.is_empty() {
        parts.push(format!("closed {}", quoted(&effect.windows_closed)));
    }
    for popup in &effect.popups_opened {
        // Its items are in the text view; a screenshot shows them too.
        parts.push(format!("showed {popup} (view text lists popups)"));
    }
    if let Some(focused) = &effect.focused {
        parts.push(format!("focus to \"{focused}\""));
    }
    if let Some(page) = &effect.page {
        parts.push(format!("page now {} \"{}\"", page.url, page.title));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use computer_protocol::handoff::PageFacts;
    use computer_protocol::recording::ScreenPoint;
    use computer_protocol::ActionKind;

    fn outcome(index: usize, kind: ActionKind, at: Option<(i32, i32)>) -> ActionOutcome {
        ActionOutcome {
            index,
            kind,
            ok: true,
            error: None,
            at: at.map(|(x, y)| ScreenPoint { x, y }),
        }
    }

    #[test]
    fn a_click_that_changed_nothing_gets_one_line() {
        let outcomes = [
            outcome(0, ActionKind::Click, Some((412, 300))),
            outcome(1, ActionKind::Wait, None),
        ];
        let effects = [
            ActionEffect {
                index: 0,
                watched_ms: 300,
                changed: Some(false),
                ..ActionEffect::default()
            },
            ActionEffect {
                index: 1,
                ..ActionEffect::default()
            },
        ];
        assert_eq!(
            effect_lines(&outcomes, &effects),
            "Action 0 (the click at 412,300) changed nothing on screen in 300 ms.\n"
        );
    }

    #[test]
    fn windows_focus_and_page_are_told_and_mere_pixels_are_not() {
        let outcomes = [
            outcome(0, ActionKind::Click, Some((5, 6))),
            outcome(1, ActionKind::Key, None),
        ];
        let effects = [
            ActionEffect {
                index: 0,
                watched_ms: 900,
                changed: Some(true),
                windows_opened: vec!["Save as".into()],
                focused: Some("Save as".into()),
                page: Some(PageFacts {
                    url: "http://x/next".into(),
                    title: "Next".into(),
                }),
                ..ActionEffect::default()
            },
            ActionEffect {
                index: 1,
                watched_ms: 300,
                changed: Some(true),
                ..ActionEffect::default()
            },
        ];
        assert_eq!(
            effect_lines(&outcomes, &effects),
            "Action 0 (the click at 5,6): opened \"Save as\"; focus to \"Save as\"; page now http://x/next \"Next\".\n"
        );
    }

    #[test]
    fn a_popup_that_showed_is_told_with_where_it_is() {
        let outcomes = [outcome(0, ActionKind::Click, Some((300, 300)))];
        let effects = [ActionEffect {
            index: 0,
            watched_ms: 200,
            changed: Some(true),
            popups_opened: vec!["menu of Chromium @ 300,300 347x332".into()],
            ..ActionEffect::default()
        }];
        assert_eq!(
            effect_lines(&outcomes, &effects),
            "Action 0 (the click at 300,300): showed menu of Chromium @ 300,300 347x332 (view text lists popups).\n"
        );
    }
}
