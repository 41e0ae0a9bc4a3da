//! The wall clock as the host writes it into labels, steps and logs.

/// Now, in RFC 3339 (UTC).
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}
