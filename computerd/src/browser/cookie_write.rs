//! Writing [`Writes`] into a browser with `Storage.setCookies`, so that one
//! cookie Chromium refuses fails only itself.
//!
//! Chromium refuses a whole batch for one cookie it will not take (a path
//! or value over its 1024-byte attribute limit, a field a newer version
//! checks). A refused batch is split in halves, and the halves again, until
//! every refusal is down to one cookie: k bad cookies among n cost about
//! 2·k·log2(n) calls instead of n.

use std::future::Future;
use std::ops::Range;

use serde_json::{json, Value};

use super::cdp::{Cdp, CdpError};
use super::cookie::Cookie;
use super::jar::Writes;

/// At most this many `Storage.setCookies` calls for one [`Writes`], so a
/// browser that refuses everything does not hold the jar's lock for long;
/// what was not tried is written in a later round.
pub const MAX_CALLS: usize = 128;

/// What became of one [`Writes`].
#[derive(Debug, Default, PartialEq)]
pub struct WriteOutcome {
    /// Accepted by the browser.
    pub written: Writes,
    /// Refused one by one: these cookies, and only these, failed.
    pub refused: Writes,
    /// Not tried within [`MAX_CALLS`].
    pub not_tried: usize,
}

impl WriteOutcome {
    /// `name` at `domain` of each refused cookie, for a log line; never a
    /// value.
    pub fn refused_names(&self) -> String {
        let names: Vec<String> = (self.refused.set.iter())
            .chain(&self.refused.delete)
            .map(|c| format!("`{}` at `{}`", c.name, c.domain))
            .collect();
        names.join(", ")
    }
}

/// Writes `writes` into the browser behind `cdp`. An error means the
/// connection failed (closed or timed out), not a refusal: what was
/// written then is not known.
pub async fn write_cookies(cdp: &Cdp, writes: &Writes) -> Result<WriteOutcome, CdpError> {
    let params = writes.to_params();
    let cookies = all_cookies(writes);
    let outcome = bisect(params.len(), MAX_CALLS, |range| {
        let batch: Vec<Value> = params[range].to_vec();
        async move {
            cdp.call("Storage.setCookies", json!({ "cookies": batch }))
                .await
                .map(drop)
        }
    })
    .await?;
    let mut result = WriteOutcome {
        not_tried: outcome.not_tried.iter().map(Range::len).sum(),
        ..WriteOutcome::default()
    };
    let sets = writes.set.len();
    for (i, cookie) in cookies.into_iter().enumerate() {
        let into = if outcome.refused.contains(&i) {
            &mut result.refused
        } else if outcome.not_tried.iter().any(|r| r.contains(&i)) {
            continue;
        } else {
            &mut result.written
        };
        if i < sets {
            into.set.push(cookie.clone());
        } else {
            into.delete.push(cookie.clone());
        }
    }
    Ok(result)
}

/// The cookies of `writes` in [`Writes::to_params`] order.
fn all_cookies(writes: &Writes) -> Vec<&Cookie> {
    writes.set.iter().chain(&writes.delete).collect()
}

/// Which items of a bisected write failed and which were not tried.
#[derive(Debug, Default, PartialEq)]
pub struct Bisected {
    /// Indices refused alone, ascending.
    pub refused: Vec<usize>,
    pub not_tried: Vec<Range<usize>>,
}

/// Writes items `0..count` through `write`, which takes a range of them
/// and fails with [`CdpError::Refused`] when the browser refuses the batch.
/// A refused range is split in halves until its refusals are single items.
/// Another error ends the write and is returned.
pub async fn bisect<F, Fut>(
    count: usize,
    max_calls: usize,
    mut write: F,
) -> Result<Bisected, CdpError>
where
    F: FnMut(Range<usize>) -> Fut,
    Fut: Future<Output = Result<(), CdpError>>,
{
    let mut result = Bisected::default();
    // Taken from the end: the first half is tried before the second.
    let mut todo = Vec::new();
    todo.push(0..count);
    let mut calls = 0;
    while let Some(range) = todo.pop() {
        if range.is_empty() {
            continue;
        }
        if calls == max_calls {
            result.not_tried.push(range);
            continue;
        }
        calls += 1;
        match write(range.clone()).await {
            Ok(()) => {}
            Err(CdpError::Refused { .. }) if range.len() == 1 => result.refused.push(range.start),
            Err(CdpError::Refused { .. }) => {
                let middle = range.start + range.len() / 2;
                todo.push(middle..range.end);
                todo.push(range.start..middle);
            }
            Err(other) => return Err(other),
        }
    }
    result.refused.sort_unstable();
    result.not_tried.sort_by_key(|r| r.start);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn refused() -> CdpError {
        CdpError::Refused {
            method: "Storage.setCookies".into(),
            message: "Invalid cookie fields".into(),
        }
    }

    /// A browser that refuses every batch holding one of `bad`, and keeps
    /// what it accepts.
    async fn run(count: usize, bad: &[usize], max_calls: usize) -> (Bisected, Vec<usize>, usize) {
        let stored = RefCell::new(Vec::new());
        let calls = RefCell::new(0);
        let result = bisect(count, max_calls, |range| {
            *calls.borrow_mut() += 1;
            let outcome = if bad.iter().any(|b| range.contains(b)) {
                Err(refused())
            } else {
                stored.borrow_mut().extend(range);
                Ok(())
            };
            async move { outcome }
        })
        .await
        .unwrap();
        let mut stored = stored.into_inner();
        stored.sort_unstable();
        (result, stored, calls.into_inner())
    }

    #[tokio::test]
    async fn one_refused_cookie_fails_only_itself() {
        let (result, stored, calls) = run(1000, &[617], MAX_CALLS).await;
        assert_eq!(result.refused, [617]);
        assert!(result.not_tried.is_empty());
        let expected: Vec<usize> = (0..1000).filter(|i| *i != 617).collect();
        assert_eq!(stored, expected);
        assert!(calls <= 1 + 2 * 10, "{calls} calls");
    }

    #[tokio::test]
    async fn an_accepted_batch_is_one_call() {
        let (result, stored, calls) = run(5, &[], MAX_CALLS).await;
        assert_eq!(result, Bisected::default());
        assert_eq!((stored.len(), calls), (5, 1));
    }

    #[tokio::test]
    async fn a_browser_refusing_everything_stops_at_the_call_budget() {
        let all: Vec<usize> = (0..1000).collect();
        let (result, stored, calls) = run(1000, &all, 10).await;
        assert_eq!(calls, 10);
        assert!(stored.is_empty());
        let untried: usize = result.not_tried.iter().map(Range::len).sum();
        assert_eq!(result.refused.len() + untried, 1000);
    }

    #[tokio::test]
    async fn a_closed_connection_ends_the_write() {
        let closed = bisect(4, MAX_CALLS, |_| async {
            Err(CdpError::Closed {
                method: "Storage.setCookies".into(),
            })
        })
        .await;
        assert!(matches!(closed, Err(CdpError::Closed { .. })));
    }
}
