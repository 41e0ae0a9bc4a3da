//! What an answer of the computer may put before the agent. The computer
//! is not trusted (a tampered computerd, or a page whose title is 100 KB),
//! so every result that carries an observation (`computer_observe`,
//! `computer_act`, `open_path`, `launch_app`) passes through
//! [`bound_observation`], and the acting tools' own sentences through
//! [`cut_text`]. Texts are cut with a visible mark rather than refused: the
//! agent keeps the outcome of actions that did run. Only what an honest
//! computer never sends (more nodes than asked, a text view asked for but
//! missing) is refused.

use computer_protocol::limits::ACTIONS_MAX;
use computer_protocol::textview::{TEXT_FIELD_MAX_CHARS, TEXT_VIEW_MAX_CHARS};
use computer_protocol::{
    ActionEffect, ActionOutcome, InvalidViewerKey, Observation, PageCursor, TextView,
    TextViewOptions,
};

/// An answer of the computer that an honest one never gives, refused
/// whole rather than cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefusedAnswer {
    #[error("the computer answered without the text view it was asked for; observe again")]
    NoTextView,
    #[error("the computer sent a text view of {nodes} nodes where {asked} were asked for; it was refused")]
    TooManyNodes { nodes: usize, asked: usize },
    #[error("the computer sent a text view of {chars} characters, over the limit of {limit} even without its nodes; it was refused", limit = TEXT_VIEW_MAX_CHARS)]
    TextTooLong { chars: usize },
    #[error("the computer answered with {count} action outcomes, more than the {limit} a batch holds; it was refused; observe the screen to see where things stand", limit = ACTIONS_MAX)]
    TooManyOutcomes { count: usize },
    #[error("the computer answered with {count} action effects, more than the {limit} a batch holds; it was refused; observe the screen to see where things stand", limit = ACTIONS_MAX)]
    TooManyEffects { count: usize },
    /// The key goes into links and command lines (the browser opener, the
    /// VNC viewer); a tampered computer must not choose what they run.
    #[error(transparent)]
    ViewerKey(#[from] InvalidViewerKey),
}

/// The active window's title: enough to recognise a window.
pub const ACTIVE_WINDOW_MAX_CHARS: usize = 256;
/// A sentence of the computer's: why a frame was reduced, what opened, why
/// an action failed, a text view's note.
pub const NOTE_MAX_CHARS: usize = 1024;
/// Short words and ids: an action's type, a node's ref and role, a
/// timestamp, a cursor.
pub const WORD_MAX_CHARS: usize = 64;
/// Windows listed in a text view; a screen holds a few dozen.
pub const WINDOWS_MAX: usize = 200;
/// Popups listed in a text view; computerd lists at most 16.
pub const POPUPS_MAX: usize = 32;
/// Items listed under one popup; computerd's menus hold at most 64.
pub const POPUP_ITEMS_MAX: usize = 64;

/// Cuts `text` to at most `max_chars` characters, the cut marked with how
/// much went, so the agent never mistakes a cut text for the whole.
pub fn cut_text(text: &mut String, max_chars: usize) {
    let total = text.chars().count();
    if total <= max_chars {
        return;
    }
    let mark = |cut: usize| format!("…[{cut} more characters cut by the host]");
    // The mark for the whole text is at least as long as the final one.
    let keep = max_chars.saturating_sub(mark(total).chars().count());
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    text.truncate(end);
    text.push_str(&mark(total - keep));
}

fn cut_option(text: &mut Option<String>, max_chars: usize) {
    if let Some(text) = text {
        cut_text(text, max_chars);
    }
}

/// Holds an observation to what the agent asked (`asked`: the text view
/// options of `computer_observe`, the default image-only ones for the
/// acting tools) and to the caps above. Returns sentences for the agent
/// about what the host left out.
pub fn bound_observation(
    observation: &mut Observation,
    asked: &TextViewOptions,
) -> Result<Vec<String>, RefusedAnswer> {
    let mut notes = Vec::new();
    cut_option(&mut observation.active_window, ACTIVE_WINDOW_MAX_CHARS);
    cut_option(&mut observation.reduced, NOTE_MAX_CHARS);
    cut_text(&mut observation.captured_at, WORD_MAX_CHARS);
    match (&mut observation.text_view, asked.view.wants_text()) {
        (None, false) => {}
        (None, true) => return Err(RefusedAnswer::NoTextView),
        (Some(_), false) => {
            observation.text_view = None;
            notes.push(
                "the computer sent a text view that was not asked for; the host left it out (ask with `computer_observe` and `view: \"text\"`)"
                    .into(),
            );
        }
        (Some(view), true) => bound_text_view(view, asked)?,
    }
    Ok(notes)
}

/// Holds an action outcome's error to its cap (its kind is an enum).
pub fn bound_outcome(outcome: &mut ActionOutcome) {
    cut_option(&mut outcome.error, NOTE_MAX_CHARS);
}

/// An action's effect: titles and the page's URL and title of bounded
/// length, at most [`WINDOWS_MAX`] windows each way.
pub fn bound_effect(effect: &mut ActionEffect) {
    cut_option(&mut effect.focused, NOTE_MAX_CHARS);
    for windows in [
        &mut effect.windows_opened,
        &mut effect.windows_closed,
        &mut effect.popups_opened,
    ] {
        windows.truncate(WINDOWS_MAX);
        windows
            .iter_mut()
            .for_each(|title| cut_text(title, NOTE_MAX_CHARS));
    }
    if let Some(page) = &mut effect.page {
        cut_text(&mut page.url, NOTE_MAX_CHARS);
        cut_text(&mut page.title, NOTE_MAX_CHARS);
    }
}

/// A text view holds at most the nodes asked for, fields of bounded size,
/// and a text of at most [`TEXT_VIEW_MAX_CHARS`]: a longer one is cut to
/// its first nodes with a cursor for the rest, as computerd cuts its own.
fn bound_text_view(view: &mut TextView, asked: &TextViewOptions) -> Result<(), RefusedAnswer> {
    let nodes = view.node_count();
    if nodes > asked.max_nodes() {
        return Err(RefusedAnswer::TooManyNodes {
            nodes,
            asked: asked.max_nodes(),
        });
    }
    let more = keep_at_most(&mut view.windows, WINDOWS_MAX);
    if more > 0 {
        append_note(
            view,
            format!("{more} more windows were left out by the host"),
        );
    }
    for window in &mut view.windows {
        cut_text(&mut window.title, TEXT_FIELD_MAX_CHARS);
        cut_text(&mut window.class, TEXT_FIELD_MAX_CHARS);
    }
    let more = keep_at_most(&mut view.popups, POPUPS_MAX);
    if more > 0 {
        append_note(
            view,
            format!("{more} more popups were left out by the host"),
        );
    }
    for popup in &mut view.popups {
        cut_text(&mut popup.kind, WORD_MAX_CHARS);
        cut_text(&mut popup.class, TEXT_FIELD_MAX_CHARS);
        popup.items.truncate(POPUP_ITEMS_MAX);
        // An item is one line: nothing nests under it.
        popup.items.iter_mut().for_each(|i| i.children.clear());
        bound_nodes(&mut popup.items);
        cut_option(&mut popup.items_note, NOTE_MAX_CHARS);
    }
    bound_nodes(&mut view.nodes);
    cut_option(&mut view.note, NOTE_MAX_CHARS);
    cut_option(&mut view.cursor, WORD_MAX_CHARS);
    let chars = view.render().len();
    if chars <= TEXT_VIEW_MAX_CHARS {
        return Ok(());
    }
    let keep = view.nodes_within(TEXT_VIEW_MAX_CHARS);
    view.keep_first(keep);
    let cursor = PageCursor {
        view_id: view.view_id,
        offset: view.offset + keep,
    }
    .to_string();
    append_note(
        view,
        format!(
            "the text of this view passed {TEXT_VIEW_MAX_CHARS} characters, so the host kept its first {keep} nodes: pass `cursor` {cursor} for the next ones"
        ),
    );
    view.cursor = Some(cursor);
    let chars = view.render().len();
    if chars > TEXT_VIEW_MAX_CHARS {
        return Err(RefusedAnswer::TextTooLong { chars });
    }
    Ok(())
}

fn bound_nodes(nodes: &mut [computer_protocol::TextNode]) {
    for node in nodes {
        cut_text(&mut node.node_ref, WORD_MAX_CHARS);
        cut_text(&mut node.role, WORD_MAX_CHARS);
        cut_text(&mut node.name, TEXT_FIELD_MAX_CHARS);
        cut_option(&mut node.value, TEXT_FIELD_MAX_CHARS);
        bound_nodes(&mut node.children);
    }
}

/// Cuts `list` to its first `max` entries; returns how many went.
fn keep_at_most<T>(list: &mut Vec<T>, max: usize) -> usize {
    let more = list.len().saturating_sub(max);
    list.truncate(max);
    more
}

fn append_note(view: &mut TextView, sentence: String) {
    view.note = Some(match view.note.take() {
        Some(note) => format!("{note}; {sentence}"),
        None => sentence,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_answer_says_what_came_and_what_to_do() {
        assert_eq!(
            RefusedAnswer::TooManyOutcomes { count: 70 }.to_string(),
            format!("the computer answered with 70 action outcomes, more than the {ACTIONS_MAX} a batch holds; it was refused; observe the screen to see where things stand")
        );
        assert_eq!(
            RefusedAnswer::TextTooLong { chars: 90_000 }.to_string(),
            format!("the computer sent a text view of 90000 characters, over the limit of {TEXT_VIEW_MAX_CHARS} even without its nodes; it was refused")
        );
        let key = InvalidViewerKey {
            shown: "\"x\"".into(),
        };
        assert_eq!(
            RefusedAnswer::ViewerKey(key.clone()).to_string(),
            key.to_string()
        );
    }

    #[test]
    fn a_cut_text_keeps_to_its_cap_and_says_so() {
        let mut short = "abc".to_string();
        cut_text(&mut short, 3);
        assert_eq!(short, "abc");
        let mut long = "é".repeat(10_000);
        cut_text(&mut long, 256);
        assert!(long.chars().count() <= 256, "{}", long.chars().count());
        assert!(long.ends_with("more characters cut by the host]"), "{long}");
        let kept = long.chars().take_while(|c| *c == 'é').count();
        assert!(
            long.contains(&format!("…[{} more", 10_000 - kept)),
            "{long}"
        );
    }
}
