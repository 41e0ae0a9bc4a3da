//! The Docker side of the host: which engine to talk to ([`endpoint`]) and
//! how to reach it ([`tls`], [`ssh`] with one login shared by its
//! connections ([`ssh_share`]), over one pooled client), where those
//! settings came from ([`origin`]), what Docker says of the computer's
//! container ([`found`]) and how it is created, started and upgraded
//! ([`container`], from a [`creation`] plan), the guard that owns its network ([`guard`]), its image ([`image`]), the questions `doctor` asks of
//! the engine ([`engine`]), published ports ([`ports`]), how those ports are reached from here ([`dialer`]: as
//! published on a local engine, through a [`tunnel`] over the engine
//! connection on a remote one), whether a connected computer is still the
//! same one ([`recheck`]), tenants' port slots ([`slots`]) and limits
//! ([`limits`]), what can go wrong ([`error`]) and its fix, which `doctor`
//! prints too ([`fix`]), and snapshots of a computer kept on its engine
//! ([`snapshot`]: save, restore, reset, templates).
//!
//! Nothing here calls Docker until [`ensure_computer`] (for `start_computer`)
//! or [`find_computer`] (for `info`) runs: resolving the endpoint only reads
//! the environment and the Docker CLI's files.

pub(crate) mod call;
pub mod container;
mod creation;
pub(crate) mod credentials;
pub mod dialer;
pub mod endpoint;
pub mod engine;
pub mod error;
pub mod fix;
pub mod found;
pub mod guard;
pub mod image;
pub mod limits;
pub mod origin;
mod pooled;
pub mod ports;
pub mod probe;
pub mod recheck;
pub mod slots;
pub mod snapshot;
pub mod ssh;
mod ssh_share;
pub mod tls;
pub mod tunnel;

pub use container::{ensure_computer, Computer, Startup};
pub use dialer::{Dialer, Reach, Way};
pub use endpoint::{resolve_endpoint, DockerEndpoint, Transport};
pub use engine::{Engine, EngineFacts, EngineQueryError};
pub use error::{DockerError, EndpointError, Refusal};
pub use found::{find_computer, ComputerState, FoundComputer};
pub use image::{binary_version, default_image, ImageFacts};
pub use origin::EndpointSource;
pub use probe::viewer_key;
