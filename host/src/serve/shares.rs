//! What each tenant may hold of the HTTP server, so that neither another
//! tenant nor anyone without a token can use up what a tenant needs.
//!
//! - A connection counts as *unproven* until one of its requests passes
//!   the guard. Past [`UNPROVEN_MAX`] of them, the oldest that had
//!   [`UNPROVEN_GRACE`] to send a request is closed (checked as each
//!   connection comes and every [`SWEEP_EVERY`]), and when the server is
//!   full the oldest unproven one makes room at once. So connections that
//!   never finish a request head, or never carry a valid token, churn among
//!   themselves instead of filling the server; a real client proves its
//!   connection with its first request, milliseconds after connecting.
//! - A proven connection takes a slot of its tenant's share
//!   ([`CONNECTIONS_VAR`] divided among the tenants, at least
//!   [`CONNECTIONS_PER_TENANT_MIN`]); past it, the tenant's new connection
//!   is answered 429 and closed. Long requests (a `shell` of ten minutes,
//!   an event stream) hold their tenant's slots, nobody else's.
//! - MCP sessions are counted per tenant ([`SESSIONS_VAR`]); an
//!   `initialize` past the limit is answered 429 (see
//!   [`crate::tenant::SessionSlots`]).
//!
//! The listener's own cap is the sum: every tenant's share and the
//! unproven ones.

use crate::settings::{Env, SettingsError};
use crate::tenant::SessionSlots;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// `COMPUTER_USE_HTTP_CONNECTIONS`: connections all tenants together may
/// hold (default [`CONNECTIONS_DEFAULT`]).
pub const CONNECTIONS_VAR: &str = "COMPUTER_USE_HTTP_CONNECTIONS";
pub const CONNECTIONS_DEFAULT: usize = 256;
/// A tenant's share is never below this: an MCP client needs one or two
/// connections, and an agent may run a few calls at once.
pub const CONNECTIONS_PER_TENANT_MIN: usize = 16;
/// `COMPUTER_USE_HTTP_SESSIONS`: MCP sessions one tenant may hold (default
/// [`SESSIONS_DEFAULT`]).
pub const SESSIONS_VAR: &str = "COMPUTER_USE_HTTP_SESSIONS";
pub const SESSIONS_DEFAULT: usize = 64;
/// Connections that have not yet sent a request the guard let through.
pub const UNPROVEN_MAX: usize = 64;
/// How long a connection has to send its first request before it may be
/// closed to make room: a burst of real clients connecting at once is not
/// mistaken for silence.
pub const UNPROVEN_GRACE: Duration = Duration::from_millis(250);
/// How often unproven connections past the limit are looked for.
pub const SWEEP_EVERY: Duration = Duration::from_millis(250);
/// The most either setting may say: each connection is a file descriptor.
const SETTING_MAX: usize = 4096;

/// The limits of a server with some number of tenants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareLimits {
    pub connections_per_tenant: usize,
    pub sessions_per_tenant: usize,
}

impl ShareLimits {
    /// From [`CONNECTIONS_VAR`] and [`SESSIONS_VAR`], for `tenants` tenants.
    pub fn from_env(env: &Env, tenants: usize) -> Result<ShareLimits, SettingsError> {
        let total = number(env, CONNECTIONS_VAR, CONNECTIONS_DEFAULT)?;
        let sessions = number(env, SESSIONS_VAR, SESSIONS_DEFAULT)?;
        Ok(ShareLimits {
            connections_per_tenant: (total / tenants.max(1)).max(CONNECTIONS_PER_TENANT_MIN),
            sessions_per_tenant: sessions,
        })
    }
}

fn number(env: &Env, name: &'static str, default: usize) -> Result<usize, SettingsError> {
    let n = crate::settings::whole_number(env, name, 1..=SETTING_MAX as u64, default as u64, "")?;
    Ok(n as usize)
}

/// One tenant's share.
pub struct TenantShare {
    pub connections: Arc<Semaphore>,
    pub connections_max: usize,
    pub sessions: SessionSlots,
}

impl TenantShare {
    pub fn new(limits: ShareLimits) -> TenantShare {
        TenantShare {
            connections: Arc::new(Semaphore::new(limits.connections_per_tenant)),
            connections_max: limits.connections_per_tenant,
            sessions: SessionSlots::new(limits.sessions_per_tenant),
        }
    }
}

/// One connection, from accept to close.
#[derive(Debug, Default)]
pub struct Ticket {
    proven: AtomicBool,
    /// The tenant's slot, once a request passed the guard.
    slot: Mutex<Option<OwnedSemaphorePermit>>,
    /// Cancelled to close the connection (an unproven one pushed out).
    evict: CancellationToken,
}

/// The tenant's share is full: its connection is answered 429 and closed.
#[derive(Debug, Clone, Copy)]
pub struct ShareFull {
    pub max: usize,
}

impl Ticket {
    /// The connection carried a request of a tenant with `share`: the
    /// first time, it takes one of the tenant's connection slots.
    pub fn prove(&self, share: &TenantShare) -> Result<(), ShareFull> {
        let mut slot = self.slot.lock();
        if slot.is_some() {
            return Ok(());
        }
        match Arc::clone(&share.connections).try_acquire_owned() {
            Ok(permit) => {
                *slot = Some(permit);
                self.proven.store(true, Ordering::SeqCst);
                Ok(())
            }
            Err(_) => Err(ShareFull {
                max: share.connections_max,
            }),
        }
    }

    /// Completes when the connection should close.
    pub async fn evicted(&self) {
        self.evict.cancelled().await
    }

    fn is_proven(&self) -> bool {
        self.proven.load(Ordering::SeqCst)
    }
}

/// The connections not yet proven, oldest first, with when each came.
#[derive(Debug, Default)]
pub struct Doorway {
    unproven: Mutex<Vec<(Weak<Ticket>, Instant)>>,
}

impl Doorway {
    /// A ticket for a connection just accepted.
    pub fn admit(&self) -> Arc<Ticket> {
        let ticket = Arc::new(Ticket::default());
        let now = Instant::now();
        self.unproven.lock().push((Arc::downgrade(&ticket), now));
        self.sweep(now);
        ticket
    }

    /// Closes the oldest unproven connections past [`UNPROVEN_MAX`] that
    /// had their [`UNPROVEN_GRACE`].
    pub fn sweep(&self, now: Instant) {
        let mut unproven = self.unproven.lock();
        forget_proven(&mut unproven);
        while unproven.len() > UNPROVEN_MAX
            && now.saturating_duration_since(unproven[0].1) >= UNPROVEN_GRACE
        {
            close_oldest(&mut unproven);
        }
    }

    /// The server is full: closes the oldest unproven connection, grace or
    /// not. Answers whether there was one.
    pub fn make_room(&self) -> bool {
        let mut unproven = self.unproven.lock();
        forget_proven(&mut unproven);
        if unproven.is_empty() {
            return false;
        }
        close_oldest(&mut unproven);
        true
    }
}

/// Tells the oldest unproven connection to close; `unproven` is not empty.
fn close_oldest(unproven: &mut Vec<(Weak<Ticket>, Instant)>) {
    let (oldest, _) = unproven.remove(0);
    if let Some(oldest) = oldest.upgrade() {
        oldest.evict.cancel();
    }
}

/// Drops the entries of connections closed or proven since.
fn forget_proven(unproven: &mut Vec<(Weak<Ticket>, Instant)>) {
    unproven.retain(|(t, _)| t.upgrade().is_some_and(|t| !t.is_proven()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn shares_divide_the_total_and_never_go_below_the_minimum() {
        let one = ShareLimits::from_env(&Env::default(), 1).unwrap();
        assert_eq!(one.connections_per_tenant, 256);
        assert_eq!(one.sessions_per_tenant, 64);
        let two = ShareLimits::from_env(&Env::default(), 2).unwrap();
        assert_eq!(two.connections_per_tenant, 128);
        let many = ShareLimits::from_env(&Env::default(), 40).unwrap();
        assert_eq!(many.connections_per_tenant, CONNECTIONS_PER_TENANT_MIN);
        let set = ShareLimits::from_env(&env(&[(CONNECTIONS_VAR, "64"), (SESSIONS_VAR, "8")]), 2)
            .unwrap();
        assert_eq!(
            (set.connections_per_tenant, set.sessions_per_tenant),
            (32, 8)
        );
        for bad in ["0", "-1", "lots", "4097"] {
            let e = ShareLimits::from_env(&env(&[(SESSIONS_VAR, bad)]), 1)
                .unwrap_err()
                .to_string();
            assert!(e.contains(SESSIONS_VAR) && e.contains("1 to 4096"), "{e}");
        }
    }

    #[test]
    fn past_the_unproven_limit_the_oldest_unproven_connection_goes() {
        let doorway = Doorway::default();
        let share = TenantShare::new(ShareLimits {
            connections_per_tenant: 1,
            sessions_per_tenant: 1,
        });
        let proven = doorway.admit();
        proven.prove(&share).unwrap();
        let first = doorway.admit();
        let rest: Vec<_> = (0..UNPROVEN_MAX).map(|_| doorway.admit()).collect();
        assert!(!first.evict.is_cancelled(), "still within its grace");
        doorway.sweep(Instant::now() + UNPROVEN_GRACE);
        assert!(first.evict.is_cancelled(), "the oldest unproven one goes");
        assert!(!proven.evict.is_cancelled(), "a proven one stays");
        assert!(rest.iter().all(|t| !t.evict.is_cancelled()));
        // A full server makes room at once.
        assert!(doorway.make_room());
        assert!(rest[0].evict.is_cancelled());
        // The share holds one: another connection of the tenant is refused.
        assert!(rest[1].prove(&share).is_err());
        drop(proven);
        assert!(
            rest[1].prove(&share).is_ok(),
            "a closed connection frees its slot"
        );
    }
}
