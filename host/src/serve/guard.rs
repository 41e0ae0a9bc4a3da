//! Who may talk to the HTTP transport: a bearer token (compared in constant
//! time), an `Origin` from the allow-list or none (browsers send one, so a
//! web page cannot drive the computer), and a `Host` naming the address the
//! server listens on or one listed in [`HOSTS_VAR`] (a DNS-rebinding page
//! names its own host).

use crate::settings::HTTP_TOKEN;
use axum::http::{header, HeaderMap, StatusCode};
use computer_protocol::Hidden;
use subtle::ConstantTimeEq;

/// Extra allowed `Origin`s, comma-separated.
pub const ORIGINS_VAR: &str = "COMPUTER_USE_HTTP_ORIGINS";
/// Extra `host[:port]` names the server is reached under (a TLS proxy's
/// name, a LAN address), comma-separated.
pub const HOSTS_VAR: &str = "COMPUTER_USE_HTTP_HOSTS";
/// The shortest token accepted: guessing 32 random characters is hopeless.
pub const TOKEN_MIN_CHARS: usize = 32;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GuardError {
    #[error("`{HTTP_TOKEN}` is not set: `serve --http` needs a bearer token of at least {TOKEN_MIN_CHARS} characters that clients send as `Authorization: Bearer <token>`; set it, for example `export {HTTP_TOKEN}=$(openssl rand -hex 32)`")]
    MissingToken,
    #[error("`{HTTP_TOKEN}` has {0} characters, fewer than the {TOKEN_MIN_CHARS} required; set a longer one, for example `export {HTTP_TOKEN}=$(openssl rand -hex 32)`")]
    ShortToken(usize),
}

/// The checks every HTTP request passes before it reaches MCP.
#[derive(Clone, Debug)]
pub struct Guard {
    /// The bearer tokens that pass, one per tenant in tenant order (one
    /// alone without tenants).
    tokens: Vec<Hidden<String>>,
    origins: Vec<String>,
    hosts: Vec<HostName>,
}

/// A `Host` authority: the name or address, lowercase (an IPv6 address keeps
/// its brackets), and the port when one is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostName {
    host: String,
    port: Option<u16>,
}

impl HostName {
    /// `name`, `name:port`, `1.2.3.4:port` or `[::1]:port`; `None` for
    /// anything else (a scheme, a path, user info, spaces).
    pub fn parse(text: &str) -> Option<HostName> {
        let authority: axum::http::uri::Authority = text.trim().parse().ok()?;
        // After the host there is nothing, or a colon and a port number.
        let after_host = authority.as_str().strip_prefix(authority.host())?;
        let port_ok = after_host.is_empty()
            || after_host
                .strip_prefix(':')
                .is_some_and(|port| port.parse::<u16>().is_ok());
        if authority.host().is_empty() || !port_ok {
            return None;
        }
        Some(HostName {
            host: authority.host().to_ascii_lowercase(),
            port: authority.port_u16(),
        })
    }

    /// Whether a request's `Host` names this one: the same name, and the
    /// same port unless this one names none (a proxy on 443 sends no port).
    fn admits(&self, sent: &HostName) -> bool {
        self.host == sent.host && self.port.is_none_or(|port| sent.port == Some(port))
    }
}

impl Guard {
    /// `token` from [`HTTP_TOKEN`], `origins` from [`ORIGINS_VAR`], `hosts`
    /// the `host:port` authorities the server is reached under.
    pub fn new(
        token: Option<&str>,
        origins: Option<&str>,
        hosts: Vec<String>,
    ) -> Result<Guard, GuardError> {
        let token = token
            .filter(|t| !t.is_empty())
            .ok_or(GuardError::MissingToken)?;
        let chars = token.chars().count();
        if chars < TOKEN_MIN_CHARS {
            return Err(GuardError::ShortToken(chars));
        }
        Ok(Guard::for_tokens(
            vec![Hidden::new(token.to_string())],
            origins,
            hosts,
        ))
    }

    /// One token per tenant, already checked by the tenants file's reader;
    /// [`Guard::check`] answers with the index of the one that passed.
    pub fn for_tokens(
        tokens: Vec<Hidden<String>>,
        origins: Option<&str>,
        hosts: Vec<String>,
    ) -> Guard {
        let origins = origins
            .unwrap_or("")
            .split(',')
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .filter(|o| !o.is_empty())
            .collect();
        Guard {
            tokens,
            origins,
            hosts: hosts.iter().filter_map(|h| HostName::parse(h)).collect(),
        }
    }

    /// The index of the token the request carries, or `Err` with the status
    /// and a short reason when it must not pass. `Host` and `Origin` come
    /// first: a refused page learns nothing about the tokens.
    pub fn check(&self, headers: &HeaderMap) -> Result<usize, (StatusCode, &'static str)> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(HostName::parse);
        if !host.is_some_and(|sent| self.hosts.iter().any(|h| h.admits(&sent))) {
            return Err((
                StatusCode::FORBIDDEN,
                "forbidden: the Host header does not name this server",
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin
                .to_str()
                .unwrap_or("")
                .trim_end_matches('/')
                .to_ascii_lowercase();
            if !self.origins.contains(&origin) {
                return Err((
                    StatusCode::FORBIDDEN,
                    "forbidden: this Origin is not allowed (COMPUTER_USE_HTTP_ORIGINS)",
                ));
            }
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .and_then(bearer_token)
            .unwrap_or_default();
        // Every token is compared, whichever matches, so the time taken
        // says nothing about which one came close.
        let mut matched = None;
        for (index, token) in self.tokens.iter().enumerate() {
            if bool::from(given.ct_eq(token.expose().as_bytes())) {
                matched = Some(index);
            }
        }
        matched.ok_or((
            StatusCode::UNAUTHORIZED,
            "unauthorized: send `Authorization: Bearer <token>`",
        ))
    }
}

/// The token of `Bearer <token>`. The scheme word is case-insensitive
/// (RFC 9110 section 11.1), so `bearer x` is the same credential; one or
/// more spaces separate it from the token.
fn bearer_token(authorization: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer";
    let (scheme, rest) = authorization.split_at_checked(SCHEME.len())?;
    if !scheme.eq_ignore_ascii_case(SCHEME) || rest.first() != Some(&b' ') {
        return None;
    }
    let start = rest.iter().position(|b| *b != b' ')?;
    Some(&rest[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn guard() -> Guard {
        Guard::new(
            Some(TOKEN),
            Some("https://app.example:8443/, http://localhost:3000"),
            vec!["127.0.0.1:8931".into(), "localhost:8931".into()],
        )
        .unwrap()
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn bearer() -> (header::HeaderName, &'static str) {
        (
            header::AUTHORIZATION,
            "Bearer 0123456789abcdef0123456789abcdef",
        )
    }

    #[test]
    fn a_missing_or_short_token_names_the_variable() {
        for token in [None, Some("")] {
            let e = Guard::new(token, None, vec![]).unwrap_err();
            assert_eq!(e, GuardError::MissingToken);
            assert!(e
                .to_string()
                .contains("`COMPUTER_USE_HTTP_TOKEN` is not set"));
        }
        let e = Guard::new(Some("short"), None, vec![]).unwrap_err();
        assert!(
            e.to_string()
                .contains("`COMPUTER_USE_HTTP_TOKEN` has 5 characters, fewer than the 32"),
            "{e}"
        );
    }

    #[test]
    fn the_right_token_host_and_no_origin_pass() {
        let g = guard();
        assert!(g
            .check(&headers(&[(header::HOST, "127.0.0.1:8931"), bearer()]))
            .is_ok());
        assert!(g
            .check(&headers(&[(header::HOST, "LOCALHOST:8931"), bearer()]))
            .is_ok());
        let listed = headers(&[
            (header::HOST, "localhost:8931"),
            (header::ORIGIN, "http://localhost:3000"),
            bearer(),
        ]);
        assert!(g.check(&listed).is_ok());
    }

    #[test]
    fn the_scheme_word_is_case_insensitive() {
        let g = guard();
        for value in [
            "bearer 0123456789abcdef0123456789abcdef",
            "BEARER 0123456789abcdef0123456789abcdef",
            "Bearer   0123456789abcdef0123456789abcdef",
        ] {
            let h = headers(&[
                (header::HOST, "127.0.0.1:8931"),
                (header::AUTHORIZATION, value),
            ]);
            assert_eq!(g.check(&h), Ok(0), "{value}");
        }
        for value in [
            "Basic 0123456789abcdef0123456789abcdef",
            "Bearer0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
            "Bearer 0123456789ABCDEF0123456789ABCDEF",
            "Bearer ",
        ] {
            let h = headers(&[
                (header::HOST, "127.0.0.1:8931"),
                (header::AUTHORIZATION, value),
            ]);
            assert!(g.check(&h).is_err(), "{value}");
        }
    }

    #[test]
    fn each_tenant_token_passes_as_its_own_index() {
        let a = "a".repeat(32);
        let b = "b".repeat(40);
        let g = Guard::for_tokens(
            vec![Hidden::new(a.clone()), Hidden::new(b.clone())],
            None,
            vec!["127.0.0.1:1".into()],
        );
        for (token, index) in [(&a, 0), (&b, 1)] {
            let h = headers(&[
                (header::HOST, "127.0.0.1:1"),
                (header::AUTHORIZATION, &format!("Bearer {token}")),
            ]);
            assert_eq!(g.check(&h), Ok(index));
        }
        let neither = headers(&[
            (header::HOST, "127.0.0.1:1"),
            (header::AUTHORIZATION, &format!("Bearer {a}{b}")),
        ]);
        assert_eq!(g.check(&neither).unwrap_err().0, StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn a_wrong_or_missing_token_is_401() {
        let g = guard();
        let none = headers(&[(header::HOST, "127.0.0.1:8931")]);
        assert_eq!(g.check(&none).unwrap_err().0, StatusCode::UNAUTHORIZED);
        let wrong = headers(&[
            (header::HOST, "127.0.0.1:8931"),
            (
                header::AUTHORIZATION,
                "Bearer 0123456789abcdef0123456789abcdeX",
            ),
        ]);
        assert_eq!(g.check(&wrong).unwrap_err().0, StatusCode::UNAUTHORIZED);
        let prefix = headers(&[
            (header::HOST, "127.0.0.1:8931"),
            (header::AUTHORIZATION, "Bearer 0123"),
        ]);
        assert_eq!(g.check(&prefix).unwrap_err().0, StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn a_foreign_host_or_origin_is_403_even_with_the_token() {
        let g = guard();
        for h in [
            headers(&[(header::HOST, "evil.example:8931"), bearer()]),
            headers(&[(header::HOST, "127.0.0.1:9999"), bearer()]),
            headers(&[bearer()]),
            headers(&[
                (header::HOST, "127.0.0.1:8931"),
                (header::ORIGIN, "https://evil.example"),
                bearer(),
            ]),
            headers(&[
                (header::HOST, "127.0.0.1:8931"),
                (header::ORIGIN, "null"),
                bearer(),
            ]),
        ] {
            assert_eq!(g.check(&h).unwrap_err().0, StatusCode::FORBIDDEN, "{h:?}");
        }
    }

    #[test]
    fn a_listed_name_without_a_port_admits_any_port_and_one_with_a_port_only_that() {
        let g = Guard::new(
            Some(TOKEN),
            None,
            vec![
                "mcp.example.com".into(),
                "192.168.7.2:8931".into(),
                "[::1]:8931".into(),
            ],
        )
        .unwrap();
        for host in [
            "mcp.example.com",
            "MCP.Example.com:443",
            "192.168.7.2:8931",
            "[::1]:8931",
        ] {
            assert!(
                g.check(&headers(&[(header::HOST, host), bearer()])).is_ok(),
                "{host}"
            );
        }
        for host in [
            "evil.example.com",
            "mcp.example.com.evil.example",
            "192.168.7.2",
            "192.168.7.2:8932",
            "[::1]",
            "user@mcp.example.com",
            "",
        ] {
            assert_eq!(
                g.check(&headers(&[(header::HOST, host), bearer()]))
                    .unwrap_err()
                    .0,
                StatusCode::FORBIDDEN,
                "{host}"
            );
        }
    }

    #[test]
    fn host_names_parse_only_as_authorities() {
        assert!(HostName::parse(" mcp.example.com:8443 ").is_some());
        for bad in [
            "",
            "http://mcp.example.com",
            "a b",
            "mcp.example.com/mcp",
            "u@h:1",
            "h:port",
        ] {
            assert_eq!(HostName::parse(bad), None, "{bad}");
        }
    }
}
