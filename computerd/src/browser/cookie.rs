//! One browser cookie as Chrome DevTools Protocol reads it (`Network.Cookie`)
//! and writes it (`Network.CookieParam`), its identity ([`CookieKey`]), and
//! which differences count as a change.
//!
//! A cookie's value is a login: it is [`Hidden`], so a cookie can be logged
//! without leaking it.

use computer_protocol::Hidden;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A cookie as `Storage.getCookies` returns it. Fields CDP adds that we do not
/// need to recreate the cookie elsewhere (`size`, `sameParty`, ...) are dropped
/// on reading; unknown fields are ignored so a newer Chromium still parses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cookie {
    pub name: String,
    pub value: Hidden<String>,
    /// `.example.com` for a domain cookie, `example.com` for a host-only one;
    /// `Storage.setCookies` makes the same distinction, so it round-trips.
    pub domain: String,
    pub path: String,
    /// Seconds since the Unix epoch; -1 for a session cookie.
    #[serde(default = "session_expires")]
    pub expires: f64,
    #[serde(default)]
    pub http_only: bool,
    #[serde(default)]
    pub secure: bool,
    #[serde(default)]
    pub session: bool,
    /// `Strict`, `Lax` or `None`; absent when the site did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_port: Option<i64>,
    /// CHIPS partition: `{topLevelSite, hasCrossSiteAncestor}` in current
    /// Chromium (a bare site string in older ones), kept as CDP gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_key: Option<Value>,
    /// A partition that cannot be named (e.g. an opaque top-level origin):
    /// such a cookie cannot be written into another browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_key_opaque: Option<bool>,
}

fn session_expires() -> f64 {
    -1.0
}

/// What makes two cookies the same cookie for a browser: a second cookie with
/// the same key replaces the first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CookieKey {
    pub name: String,
    pub domain: String,
    pub path: String,
    /// The partition key as canonical JSON (sorted object keys), so the same
    /// partition read twice gives the same key; `None` when unpartitioned.
    pub partition: Option<String>,
}

impl CookieKey {
    /// The key of a cookie with these identity fields, `partition_key` as
    /// CDP gave it.
    pub fn new(name: &str, domain: &str, path: &str, partition_key: Option<&Value>) -> CookieKey {
        CookieKey {
            name: name.to_string(),
            domain: domain.to_string(),
            path: path.to_string(),
            partition: partition_key.map(canonical_json),
        }
    }
}

impl Cookie {
    pub fn key(&self) -> CookieKey {
        CookieKey::new(
            &self.name,
            &self.domain,
            &self.path,
            self.partition_key.as_ref(),
        )
    }

    /// False for a cookie in an opaque partition: CDP cannot name that
    /// partition, so the cookie stays in the browser that made it.
    pub fn is_shareable(&self) -> bool {
        self.partition_key_opaque != Some(true)
    }

    /// Whether the cookie's expiry is at or before `now_ms`; a session cookie
    /// never expires by time.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        !self.session && self.expires >= 0.0 && self.expires * 1000.0 <= now_ms as f64
    }

    /// Whether `other` holds the same login as `self`: the fields a site
    /// sets. Expiry counts only to the second, because Chromium keeps
    /// microseconds and the float read back after a write can differ in its
    /// last digits; a cookie we wrote must read back as unchanged.
    pub fn same_content(&self, other: &Cookie) -> bool {
        self.value == other.value
            && (self.expires - other.expires).abs() < 1.0
            && self.secure == other.secure
            && self.http_only == other.http_only
            && self.same_site == other.same_site
            && self.session == other.session
    }

    /// The cookie as a `Network.CookieParam` for `Storage.setCookies`.
    /// `expires` is left out for a session cookie (any number would make it
    /// persistent); `session` and `partitionKeyOpaque` are not parameters.
    pub fn to_param(&self) -> Value {
        let mut param = Map::new();
        param.insert("name".into(), self.name.clone().into());
        param.insert("value".into(), self.value.expose().clone().into());
        param.insert("domain".into(), self.domain.clone().into());
        param.insert("path".into(), self.path.clone().into());
        param.insert("secure".into(), self.secure.into());
        param.insert("httpOnly".into(), self.http_only.into());
        if !self.session && self.expires >= 0.0 {
            param.insert("expires".into(), self.expires.into());
        }
        if let Some(same_site) = &self.same_site {
            param.insert("sameSite".into(), same_site.clone().into());
        }
        if let Some(priority) = &self.priority {
            param.insert("priority".into(), priority.clone().into());
        }
        if let Some(scheme) = &self.source_scheme {
            param.insert("sourceScheme".into(), scheme.clone().into());
        }
        // Chromium refuses a whole `setCookies` batch over one port outside
        // -1 (unspecified) and 1..=65535; without it the port is implied.
        if let Some(port) = self
            .source_port
            .filter(|p| *p == -1 || (1..=65535).contains(p))
        {
            param.insert("sourcePort".into(), port.into());
        }
        if let Some(partition) = &self.partition_key {
            param.insert("partitionKey".into(), partition.clone());
        }
        Value::Object(param)
    }

    /// A `Network.CookieParam` that removes this cookie: the same identity
    /// and flags (so Chromium accepts it as the same cookie), an empty value,
    /// and an expiry in the past, which makes Chromium delete it.
    pub fn deletion_param(&self) -> Value {
        let mut param = self.to_param();
        param["value"] = "".into();
        param["expires"] = 1.into();
        param
    }
}

/// JSON with object keys sorted at every level, whatever order CDP sent them
/// in (and whether or not serde_json preserves insertion order).
fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A persistent cookie as CDP reports it; tests change fields from here.
    pub(crate) fn cookie(name: &str, value: &str) -> Cookie {
        Cookie {
            name: name.into(),
            value: Hidden::new(value.into()),
            domain: ".example.com".into(),
            path: "/".into(),
            expires: 2_000_000_000.25,
            http_only: true,
            secure: true,
            session: false,
            same_site: Some("Lax".into()),
            priority: Some("Medium".into()),
            source_scheme: Some("Secure".into()),
            source_port: Some(443),
            partition_key: None,
            partition_key_opaque: None,
        }
    }

    pub(crate) fn session_cookie(name: &str, value: &str) -> Cookie {
        Cookie {
            expires: -1.0,
            session: true,
            ..cookie(name, value)
        }
    }

    #[test]
    fn parses_cdp_cookie_and_ignores_fields_it_does_not_keep() {
        let cdp = json!({
            "name": "sid", "value": "abc", "domain": "example.com", "path": "/",
            "expires": -1, "size": 6, "httpOnly": true, "secure": true, "session": true,
            "sameSite": "Lax", "priority": "Medium", "sameParty": false,
            "sourceScheme": "Secure", "sourcePort": 443,
            "partitionKey": {"topLevelSite": "https://example.com", "hasCrossSiteAncestor": false},
            "partitionKeyOpaque": false
        });
        let parsed: Cookie = serde_json::from_value(cdp).unwrap();
        assert_eq!(parsed.name, "sid");
        assert_eq!(parsed.expires, -1.0);
        assert!(parsed.session && parsed.http_only && parsed.secure);
        assert_eq!(parsed.source_port, Some(443));
        assert!(parsed.is_shareable());
        let back = serde_json::to_value(&parsed).unwrap();
        assert!(back.get("size").is_none() && back.get("sameParty").is_none());
        assert_eq!(back["httpOnly"], true);
    }

    #[test]
    fn key_is_the_same_whatever_order_the_partition_key_fields_come_in() {
        let mut a = cookie("sid", "1");
        a.partition_key =
            Some(json!({"topLevelSite": "https://a.test", "hasCrossSiteAncestor": false}));
        let b: Cookie = serde_json::from_str(
            r#"{"name":"sid","value":"2","domain":".example.com","path":"/",
                "partitionKey":{"hasCrossSiteAncestor":false,"topLevelSite":"https://a.test"}}"#,
        )
        .unwrap();
        assert_eq!(a.key(), b.key());
        assert_ne!(
            a.key(),
            cookie("sid", "1").key(),
            "partitioned differs from unpartitioned"
        );
        assert_eq!(cookie("sid", "1").key().partition, None);
    }

    #[test]
    fn same_content_ignores_sub_second_expiry_and_fields_chromium_fills_in() {
        let written = cookie("sid", "abc");
        let mut read_back = written.clone();
        read_back.expires = written.expires + 0.000_001;
        read_back.priority = None;
        read_back.source_port = Some(-1);
        assert!(written.same_content(&read_back));

        let changes: [fn(&mut Cookie); 6] = [
            |c| c.value = Hidden::new("other".into()),
            |c| c.expires += 3600.0,
            |c| c.secure = false,
            |c| c.http_only = false,
            |c| c.same_site = None,
            |c| c.session = true,
        ];
        for change in changes {
            let mut changed = written.clone();
            change(&mut changed);
            assert!(!written.same_content(&changed), "{changed:?}");
        }
    }

    #[test]
    fn session_cookie_param_has_no_expires() {
        let param = session_cookie("sid", "abc").to_param();
        assert!(param.get("expires").is_none(), "{param}");
        assert!(param.get("session").is_none() && param.get("size").is_none());
        assert_eq!(param["value"], "abc");
    }

    #[test]
    fn persistent_cookie_param_keeps_expires_flags_and_partition() {
        let mut c = cookie("sid", "abc");
        c.partition_key =
            Some(json!({"topLevelSite": "https://a.test", "hasCrossSiteAncestor": false}));
        c.partition_key_opaque = Some(false);
        let param = c.to_param();
        assert_eq!(
            param,
            json!({
                "name": "sid", "value": "abc", "domain": ".example.com", "path": "/",
                "secure": true, "httpOnly": true, "expires": 2_000_000_000.25,
                "sameSite": "Lax", "priority": "Medium", "sourceScheme": "Secure",
                "sourcePort": 443,
                "partitionKey": {"topLevelSite": "https://a.test", "hasCrossSiteAncestor": false}
            })
        );
    }

    #[test]
    fn param_leaves_out_a_source_port_chromium_would_refuse() {
        let mut c = cookie("sid", "abc");
        c.source_port = Some(0);
        assert!(c.to_param().get("sourcePort").is_none());
        c.source_port = Some(-1);
        assert_eq!(c.to_param()["sourcePort"], -1);
    }

    #[test]
    fn deletion_param_has_same_identity_empty_value_and_past_expiry() {
        for c in [cookie("sid", "abc"), session_cookie("sid", "abc")] {
            let param = c.deletion_param();
            assert_eq!(param["name"], "sid");
            assert_eq!(param["domain"], ".example.com");
            assert_eq!(param["path"], "/");
            assert_eq!(param["value"], "");
            assert_eq!(param["expires"], 1);
        }
    }

    #[test]
    fn opaque_partition_is_not_shareable() {
        let mut c = cookie("sid", "abc");
        c.partition_key_opaque = Some(true);
        assert!(!c.is_shareable());
    }

    #[test]
    fn expiry_is_by_wall_clock_and_session_cookies_never_expire() {
        let c = cookie("sid", "abc");
        assert!(!c.is_expired(2_000_000_000_000));
        assert!(c.is_expired(2_000_000_000_250));
        assert!(!session_cookie("sid", "abc").is_expired(u64::MAX));
    }

    #[test]
    fn debug_does_not_contain_the_value() {
        let c = cookie("sid", "s3cr3t-login-token");
        let shown = format!("{c:?} {c:#?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("sid") && shown.contains("(hidden)"));
    }
}
