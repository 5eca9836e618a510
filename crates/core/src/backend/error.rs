//! A backend's failure, in the core's words: a kind the core acts on, and the API's message.

use serde::{Deserialize, Serialize};

use crate::api::Api;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The API's library or driver is missing, or it has no device.
    Unavailable,
    /// The API refused this launch configuration (its own error is in the message).
    LaunchRejected,
    /// Not enough device memory (or a buffer above an allocation/binding limit).
    OutOfMemory,
    /// The kernel did not compile or link.
    Build,
    /// Anything else the driver reported.
    Driver,
    /// The kernel took its process down or never finished: a worker killed by a signal, or
    /// silent past the deadline (and killed). The API is over for this run.
    Fault,
}

/// An error from a backend, classified so the driver can decide what to do with it (skip a
/// row, stop the API, or report the API as unavailable). Each backend maps its own typed error
/// into this; the original is kept as the source.
#[derive(Debug, thiserror::Error)]
#[error("{api}: {message}")]
pub struct BackendError {
    pub api: Api,
    pub kind: ErrorKind,
    pub message: String,
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl BackendError {
    pub fn new(api: Api, kind: ErrorKind, message: impl Into<String>) -> Self {
        BackendError {
            api,
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub fn with_source(
        api: Api,
        kind: ErrorKind,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        BackendError {
            api,
            kind,
            message: source.to_string(),
            source: Some(Box::new(source)),
        }
    }
}

impl BackendError {
    /// The error with the launch it happened at: "... at block 256, grid 2; the rows before
    /// it are kept". A refusal of the launch is left as it is (its row says so).
    pub fn at(mut self, launch: crate::backend::Launch) -> Self {
        if self.kind != ErrorKind::LaunchRejected {
            self.message = format!(
                "{} (at block {}, grid {}; the rows before it are kept)",
                self.message, launch.block, launch.grid
            );
        }
        self
    }
}

pub type BackendResult<T> = Result<T, BackendError>;
