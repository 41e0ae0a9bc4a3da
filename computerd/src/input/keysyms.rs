//! Key names as agents write them, and the X keysyms they stand for.

/// An X keysym (X11 `keysymdef.h`).
pub type Keysym = u32;

pub const NO_SYMBOL: Keysym = 0;
pub const RETURN: Keysym = 0xff0d;
pub const TAB: Keysym = 0xff09;
pub const BACKSPACE: Keysym = 0xff08;
pub const ESCAPE: Keysym = 0xff1b;
pub const DELETE: Keysym = 0xffff;
pub const SHIFT_L: Keysym = 0xffe1;
pub const SHIFT_R: Keysym = 0xffe2;
pub const CONTROL_L: Keysym = 0xffe3;
pub const CONTROL_R: Keysym = 0xffe4;
pub const CAPS_LOCK: Keysym = 0xffe5;
pub const META_L: Keysym = 0xffe7;
pub const ALT_L: Keysym = 0xffe9;
pub const ALT_R: Keysym = 0xffea;
pub const SUPER_L: Keysym = 0xffeb;
pub const SUPER_R: Keysym = 0xffec;
const F1: Keysym = 0xffbe;

/// Names other than single characters and `f1`..`f24`, lowercase. The
/// modifier names are here too, so `super` alone presses the Super key.
const NAMED: &[(&str, Keysym)] = &[
    ("enter", RETURN),
    ("return", RETURN),
    ("esc", ESCAPE),
    ("escape", ESCAPE),
    ("tab", TAB),
    ("space", 0x20),
    ("backspace", BACKSPACE),
    ("delete", DELETE),
    ("del", DELETE),
    ("insert", 0xff63),
    ("ins", 0xff63),
    ("home", 0xff50),
    ("end", 0xff57),
    ("pageup", 0xff55),
    ("page_up", 0xff55),
    ("pgup", 0xff55),
    ("prior", 0xff55),
    ("pagedown", 0xff56),
    ("page_down", 0xff56),
    ("pgdn", 0xff56),
    ("next", 0xff56),
    ("up", 0xff52),
    ("down", 0xff54),
    ("left", 0xff51),
    ("right", 0xff53),
    ("capslock", CAPS_LOCK),
    ("caps_lock", CAPS_LOCK),
    ("printscreen", 0xff61),
    ("print", 0xff61),
    ("prtsc", 0xff61),
    ("menu", 0xff67),
    ("pause", 0xff13),
    ("scrolllock", 0xff14),
    ("scroll_lock", 0xff14),
    ("numlock", 0xff7f),
    ("num_lock", 0xff7f),
    ("ctrl", CONTROL_L),
    ("control", CONTROL_L),
    ("alt", ALT_L),
    ("option", ALT_L),
    ("shift", SHIFT_L),
    ("super", SUPER_L),
    ("cmd", SUPER_L),
    ("command", SUPER_L),
    ("meta", SUPER_L),
    ("win", SUPER_L),
    ("plus", 0x2b),
    ("minus", 0x2d),
    ("equal", 0x3d),
    ("equals", 0x3d),
    ("comma", 0x2c),
    ("period", 0x2e),
    ("dot", 0x2e),
    ("slash", 0x2f),
    ("backslash", 0x5c),
    ("semicolon", 0x3b),
    ("colon", 0x3a),
    ("apostrophe", 0x27),
    ("quote", 0x27),
    ("quotedbl", 0x22),
    ("doublequote", 0x22),
    ("grave", 0x60),
    ("backtick", 0x60),
    ("tilde", 0x7e),
    ("bracketleft", 0x5b),
    ("leftbracket", 0x5b),
    ("bracketright", 0x5d),
    ("rightbracket", 0x5d),
    ("braceleft", 0x7b),
    ("leftbrace", 0x7b),
    ("braceright", 0x7d),
    ("rightbrace", 0x7d),
    ("parenleft", 0x28),
    ("parenright", 0x29),
    ("less", 0x3c),
    ("greater", 0x3e),
    ("question", 0x3f),
    ("exclam", 0x21),
    ("exclamation", 0x21),
    ("at", 0x40),
    ("numbersign", 0x23),
    ("hash", 0x23),
    ("dollar", 0x24),
    ("percent", 0x25),
    ("asciicircum", 0x5e),
    ("caret", 0x5e),
    ("ampersand", 0x26),
    ("asterisk", 0x2a),
    ("star", 0x2a),
    ("underscore", 0x5f),
    ("bar", 0x7c),
    ("pipe", 0x7c),
];

/// The keysym of a key name (case-insensitive), or of a single character
/// (case-sensitive: `A` is shift+a). `None` for anything else.
pub fn for_name(name: &str) -> Option<Keysym> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(for_char(c));
    }
    let lower = name.to_ascii_lowercase();
    if let Some(&(_, keysym)) = NAMED.iter().find(|(n, _)| *n == lower) {
        return Some(keysym);
    }
    // `f1`..`f24`; `f05` or `f+5` is not a name anyone writes.
    let digits = lower.strip_prefix('f')?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (1..=24).contains(&n).then(|| F1 + n - 1)
}

/// The keysym that types `c`: Latin-1 characters are their own keysym,
/// everything else is a Unicode keysym (`0x0100_0000 | codepoint`).
pub fn for_char(c: char) -> Keysym {
    let code = u32::from(c);
    match code {
        0x20..=0x7e | 0xa0..=0xff => code,
        _ => 0x0100_0000 | code,
    }
}

/// The other keysym that may stand for the same character in a keymap:
/// some layouts list Latin-1 letters by their Unicode keysym.
pub fn alternate(keysym: Keysym) -> Option<Keysym> {
    match keysym {
        0x20..=0x7e | 0xa0..=0xff => Some(0x0100_0000 | keysym),
        0x0100_0020..=0x0100_007e | 0x0100_00a0..=0x0100_00ff => Some(keysym & 0xff),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive() {
        assert_eq!(for_name("Enter"), Some(RETURN));
        assert_eq!(for_name("RETURN"), Some(RETURN));
        assert_eq!(for_name("esc"), Some(ESCAPE));
        assert_eq!(for_name("PageUp"), Some(0xff55));
        assert_eq!(for_name("page_down"), Some(0xff56));
        assert_eq!(for_name("PgUp"), Some(0xff55));
        assert_eq!(for_name("BackSpace"), Some(BACKSPACE));
        assert_eq!(for_name("Print"), Some(0xff61));
        assert_eq!(for_name("plus"), Some(u32::from('+')));
        assert_eq!(for_name("space"), Some(0x20));
    }

    #[test]
    fn function_keys_run_f1_to_f24() {
        assert_eq!(for_name("f1"), Some(0xffbe));
        assert_eq!(for_name("F5"), Some(0xffc2));
        assert_eq!(for_name("f12"), Some(0xffc9));
        assert_eq!(for_name("f24"), Some(0xffd5));
        assert_eq!(for_name("f0"), None);
        assert_eq!(for_name("f25"), None);
        assert_eq!(for_name("f05"), None);
        assert_eq!(for_name("fx"), None);
    }

    #[test]
    fn single_characters_keep_their_case() {
        assert_eq!(for_name("a"), Some(0x61));
        assert_eq!(for_name("A"), Some(0x41));
        assert_eq!(for_name("é"), Some(0xe9));
        assert_eq!(for_name("你"), Some(0x0100_4f60));
        assert_eq!(for_name("hyperspace"), None);
    }

    #[test]
    fn modifier_names_are_keys_too() {
        for name in ["super", "cmd", "command", "meta", "win"] {
            assert_eq!(for_name(name), Some(SUPER_L), "{name}");
        }
        assert_eq!(for_name("option"), Some(ALT_L));
        assert_eq!(for_name("control"), Some(CONTROL_L));
    }

    #[test]
    fn characters_map_to_latin1_or_unicode_keysyms() {
        assert_eq!(for_char(' '), 0x20);
        assert_eq!(for_char('~'), 0x7e);
        assert_eq!(for_char('\u{a0}'), 0xa0);
        assert_eq!(for_char('ÿ'), 0xff);
        assert_eq!(for_char('€'), 0x0100_20ac);
        assert_eq!(for_char('👋'), 0x0101_f44b);
        assert_eq!(alternate(0xe9), Some(0x0100_00e9));
        assert_eq!(alternate(0x0100_00e9), Some(0xe9));
        assert_eq!(alternate(0x0100_4f60), None);
    }
}
