//! Which parts of Chromium's `Default/Preferences` carry over from one
//! browser to the next through the template profile.
//!
//! `Preferences` holds the person's settings beside what pages obtained:
//! site permissions (`profile.content_settings.exceptions`: clipboard,
//! notifications, camera), protocol handlers a page registered
//! (`custom_handlers`), "always open" choices for external protocols
//! (`protocol_handler`). Copied whole, a permission given on one screen
//! would be given in every later browser of every agent. So only the
//! [`SHARED`] settings travel, in both directions: a clone gets only them
//! from the template, and a copy-back takes only them from the clone.

use serde_json::{Map, Value};

/// The settings that carry over, as dotted paths into the JSON. Each is a
/// choice made in the browser's own settings, never by a page.
pub const SHARED: [&str; 13] = [
    // Page zoom per site and the default zoom.
    "partition.per_host_zoom_levels",
    "partition.default_zoom_level",
    // Where downloads go and whether to ask.
    "download.default_directory",
    "download.prompt_for_download",
    "savefile.default_directory",
    // What opens at start and on the home button.
    "session.restore_on_startup",
    "session.startup_urls",
    "homepage",
    "homepage_is_newtabpage",
    "browser.show_home_button",
    // The bookmark bar on every tab.
    "bookmark_bar.show_on_all_tabs",
    // Languages and fonts.
    "intl.accept_languages",
    "webkit.webprefs",
];

/// `prefs` with only the [`SHARED`] settings it has.
pub fn shared_part(prefs: &Value) -> Value {
    let mut shared = Value::Object(Map::new());
    for path in SHARED {
        if let Some(value) = get(prefs, path) {
            set(&mut shared, path, value.clone());
        }
    }
    shared
}

/// The template's next `Preferences`: the [`SHARED`] settings of
/// `template`, where each one the browser changed since it was cloned
/// (`at_clone` to `now`) is taken from `now`, a removal included. A
/// setting the browser left alone keeps what another screen may have
/// copied back meanwhile.
pub fn merge(template: &Value, at_clone: &Value, now: &Value) -> Value {
    let mut merged = shared_part(template);
    for path in SHARED {
        let after = get(now, path);
        if after == get(at_clone, path) {
            continue;
        }
        match after {
            Some(value) => set(&mut merged, path, value.clone()),
            None => remove(&mut merged, path),
        }
    }
    merged
}

fn get<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |at, name| at.get(name))
}

/// Sets `path` in `value`, making the objects on the way.
fn set(value: &mut Value, path: &str, new: Value) {
    let mut at = value;
    for name in path.split('.') {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(map) = at else {
            unreachable!("made an object just above")
        };
        at = map.entry(name).or_insert(Value::Null);
    }
    *at = new;
}

/// Removes `path` from `value`, and the objects it leaves empty.
fn remove(value: &mut Value, path: &str) {
    fn remove_in(value: &mut Value, names: &[&str]) {
        let Some(map) = value.as_object_mut() else {
            return;
        };
        match names {
            [] => {}
            [last] => {
                map.remove(*last);
            }
            [first, rest @ ..] => {
                if let Some(inner) = map.get_mut(*first) {
                    remove_in(inner, rest);
                    if inner.as_object().is_some_and(Map::is_empty) {
                        map.remove(*first);
                    }
                }
            }
        }
    }
    let names: Vec<&str> = path.split('.').collect();
    remove_in(value, &names);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Preferences as Chromium writes them after a page got the clipboard.
    fn with_permissions() -> Value {
        json!({
            "partition": {"per_host_zoom_levels": {"x": {"a.test": {"zoom_level": 1.5}}}},
            "profile": {"content_settings": {"exceptions": {
                "clipboard": {"https://evil.example:443,*": {"setting": 1}}
            }}},
            "custom_handlers": {"registered_protocol_handlers": [{"protocol": "mailto", "url": "https://evil.example/%s"}]},
            "protocol_handler": {"allowed_origin_protocol_pairs": {"https://evil.example": {"ms-word": true}}},
            "download": {"default_directory": "/home/computer/Downloads", "prompt_for_download": false},
        })
    }

    #[test]
    fn the_shared_part_has_settings_and_no_permissions_or_handlers() {
        assert_eq!(
            shared_part(&with_permissions()),
            json!({
                "partition": {"per_host_zoom_levels": {"x": {"a.test": {"zoom_level": 1.5}}}},
                "download": {"default_directory": "/home/computer/Downloads", "prompt_for_download": false},
            })
        );
    }

    #[test]
    fn merge_takes_what_the_browser_changed_and_keeps_the_rest_of_the_template() {
        let template = json!({
            "homepage": "https://home.test",
            "download": {"default_directory": "/a"},
            "intl": {"accept_languages": "de"},
            "profile": {"content_settings": {"exceptions": {"notifications": {}}}},
        });
        let at_clone = shared_part(&template);
        // Meanwhile another screen changed the languages in the template.
        let template_now = json!({
            "homepage": "https://home.test",
            "download": {"default_directory": "/a"},
            "intl": {"accept_languages": "fr"},
        });
        let now = json!({
            "download": {"default_directory": "/b"},
            "intl": {"accept_languages": "de"},
            "profile": {"content_settings": {"exceptions": {"clipboard": {"https://evil.example:443,*": {"setting": 1}}}}},
        });
        assert_eq!(
            merge(&template_now, &at_clone, &now),
            json!({
                "download": {"default_directory": "/b"},
                "intl": {"accept_languages": "fr"},
            }),
            "homepage removed, directory changed, languages untouched, no permissions"
        );
    }
}
