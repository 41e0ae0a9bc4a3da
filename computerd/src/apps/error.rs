//! What can go wrong deciding what `open_path` and `launch_app` open, said
//! for an agent: which field, what exists instead, and what to do.

use computer_protocol::{Coded, ErrorCode};
use std::io;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("`app` is empty: give `browser`, `terminal`, the name of an installed application (such as `libreoffice-writer`) or a program on `PATH`")]
    EmptyApp,

    #[error("`app` `{app}` is a path, not an application name: open a file with `open_path`, or run a program by its path with `shell`")]
    AppIsPath { app: String },

    #[error("{}", unknown_app(.app, .installed, *.more))]
    UnknownApp {
        app: String,
        /// `browser`, `terminal`, then the ids of visible entries, sorted.
        installed: Vec<String>,
        /// How many ids were left out of `installed`.
        more: usize,
    },

    #[error("`uri` is empty: leave it out, or give the link or path to open in the application")]
    EmptyUri,

    #[error("`uri` `{uri}` starts with `-`, so the application would read it as an option: give a URL or an absolute path")]
    UriIsOption { uri: String },

    #[error("`uri` `{uri}` is a `{scheme}:` link, which `launch_app` does not open in the browser: give an `http://` or `https://` URL, or the path of a file on the computer (such as `/home/computer/a.pdf`, not `file:///home/computer/a.pdf`)")]
    BrowserUriScheme { uri: String, scheme: String },

    #[error(
        "`uri` `{uri}` is not a valid URL: {reason}; give a URL such as `https://example.com/page`"
    )]
    InvalidBrowserUri { uri: String, reason: &'static str },

    #[error(
        "`target` is empty: give an `http://` or `https://` URL, or the path of a file or folder"
    )]
    EmptyTarget,

    #[error("`target` `{target}` is a `{scheme}:` link, which `open_path` does not open: give the path of a file on the computer (such as `/home/computer/a.pdf`, not `file:///home/computer/a.pdf`) or an `http://` or `https://` URL")]
    UnsupportedScheme { target: String, scheme: String },

    #[error("`target` `{url}` is not a valid URL: {reason}; give a URL such as `https://example.com/page`")]
    InvalidUrl { url: String, reason: &'static str },

    #[error("{}", not_found(.missing, .folder, .entries, *.more))]
    NotFound {
        /// The part of the path that does not exist, relative to `folder`.
        missing: String,
        /// The nearest folder that exists.
        folder: String,
        /// Some of `folder`'s entries, folders ending with `/`; `None` when
        /// the folder cannot be listed.
        entries: Option<Vec<String>>,
        /// How many entries were left out of `entries`.
        more: usize,
    },

    #[error("`{path}` is not a regular file or folder (it is a device, socket or pipe): use `shell` to work with it")]
    NotRegular { path: String },

    #[error("permission denied to read `{path}`: choose a file the user `computer` may read, or change its permissions with `shell`")]
    PermissionDenied { path: String },

    #[error("could not read `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

fn unknown_app(app: &str, installed: &[String], more: usize) -> String {
    let more = if more == 0 {
        String::new()
    } else {
        format!(" and {more} more")
    };
    format!(
        "no application `{app}`: it is not `browser` or `terminal`, nor the id or name of an installed `.desktop` entry, nor a program on `PATH`; give one of: {}{more}, or a program's name (`shell` can find it with `ls /usr/bin`)",
        installed.join(", ")
    )
}

fn not_found(missing: &str, folder: &str, entries: &Option<Vec<String>>, more: usize) -> String {
    let holds = match entries {
        None => "which cannot be listed".to_string(),
        Some(entries) if entries.is_empty() => "which is empty".to_string(),
        Some(entries) if more == 0 => format!("which holds: {}", entries.join(", ")),
        Some(entries) => format!("which holds: {} and {more} more", entries.join(", ")),
    };
    format!("no file or folder `{missing}` in `{folder}`, {holds}; check the name (look around with `list_files`), or give an `https://` URL for a web page")
}

impl Coded for AppError {
    fn code(&self) -> ErrorCode {
        match self {
            AppError::EmptyApp
            | AppError::AppIsPath { .. }
            | AppError::EmptyUri
            | AppError::UriIsOption { .. }
            | AppError::BrowserUriScheme { .. }
            | AppError::InvalidBrowserUri { .. }
            | AppError::EmptyTarget
            | AppError::UnsupportedScheme { .. }
            | AppError::InvalidUrl { .. } => ErrorCode::InvalidInput,
            AppError::UnknownApp { .. } | AppError::NotFound { .. } => ErrorCode::NotFound,
            AppError::NotRegular { .. } => ErrorCode::Conflict,
            AppError::PermissionDenied { .. } => ErrorCode::PermissionDenied,
            AppError::Io { .. } => ErrorCode::Internal,
        }
    }
}
