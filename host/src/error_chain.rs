//! An error and its causes on one line, for messages and logs. Transport
//! errors say little on their own ("client error (Connect)"); their causes
//! say "connection refused".

/// `error`'s text, then each cause's after a colon; a cause whose text a
/// layer already repeats in its own is left out.
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let next = c.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{text}")]
    struct Layer {
        text: &'static str,
        #[source]
        cause: Option<Box<Layer>>,
    }

    fn layer(text: &'static str, cause: Option<Layer>) -> Layer {
        Layer {
            text,
            cause: cause.map(Box::new),
        }
    }

    #[test]
    fn causes_follow_on_one_line_and_repeats_are_left_out() {
        let refused = layer("connection refused", None);
        let connect = layer("client error (Connect)", Some(refused));
        assert_eq!(
            describe(&connect),
            "client error (Connect): connection refused"
        );
        let repeating = layer(
            "request failed: connection refused",
            Some(layer("connection refused", None)),
        );
        assert_eq!(describe(&repeating), "request failed: connection refused");
        assert_eq!(describe(&layer("alone", None)), "alone");
    }
}
