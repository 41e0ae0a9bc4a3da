//! Why the guard could not start, install a policy's rules, or be asked.
//! Each message names what failed and, where there is one, the fix.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("usage: computerd net-guard run POLICY_JSON | log | policy POLICY_JSON")]
    Usage,
    #[error("the policy is not valid JSON of a network policy: {0}")]
    PolicyJson(#[source] serde_json::Error),
    #[error("no resolver: /etc/resolv.conf names none; set COMPUTER_USE_EGRESS_DNS")]
    NoResolver,
    #[error("no async runtime: {0}")]
    Runtime(#[source] io::Error),
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot run `nft` (the image needs the nftables package): {0}")]
    NftMissing(#[source] io::Error),
    #[error("cannot send the rules to `nft`: {0}")]
    NftInput(#[source] io::Error),
    #[error("`nft` did not finish: {0}")]
    NftWait(#[source] io::Error),
    #[error("`nft` refused the rules ({status}): {stderr}")]
    NftRefused { status: String, stderr: String },
    #[error("the guard does not answer on {socket}: {source}")]
    NotAnswering {
        socket: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("cannot ask the guard: {0}")]
    Ask(#[source] io::Error),
    #[error("no answer from the guard: {0}")]
    NoAnswer(#[source] io::Error),
    /// The guard answered with an error line: its own words.
    #[error("{0}")]
    Answered(String),
}

impl GuardError {
    /// A listener that could not be bound on `address`.
    pub fn listen(address: impl std::fmt::Display) -> impl FnOnce(io::Error) -> GuardError {
        let address = address.to_string();
        move |source| GuardError::Listen { address, source }
    }
}
