//! Options an API's provider declares for opening its devices (CUDA's compiler, Vulkan's checking
//! layer). The core only carries them: each provider lists its own in [`crate::ApiInfo::options`],
//! the command line offers what the providers list, and each provider reads its own back out of
//! [`OpenOptions`] when it opens a device.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One option a provider declares; its `flag` is the command line's `--<flag>`, which is also
/// the key its value travels under.
#[derive(Debug)]
pub struct ApiOption {
    /// The long flag without its dashes, prefixed by the API ("cuda-compiler").
    pub flag: &'static str,
    /// One line for `--help`.
    pub help: &'static str,
    pub kind: OptionKind,
}

/// What an option takes.
#[derive(Debug)]
pub enum OptionKind {
    /// On or off; off unless given.
    Switch,
    /// One of these values (each with a line of help); `default` unless given. `value_name`
    /// stands for the value in `--help` ("COMPILER").
    Choice {
        value_name: &'static str,
        values: &'static [(&'static str, &'static str)],
        default: &'static str,
    },
    /// Free text, passed through; absent unless given.
    Text { value_name: &'static str },
}

/// The options given for one run, by flag: what opening a device is told. Each provider reads
/// the flags it declared and ignores the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpenOptions {
    given: BTreeMap<String, String>,
    /// Open each device in a worker process started so, instead of in this one
    /// ([`crate::worker`]). Not a driver's option: the registry acts on it, and a worker is
    /// never told it.
    #[serde(skip)]
    pub worker: Option<WorkerCommand>,
}

/// How to start a worker ([`crate::worker`]): the program and the arguments that put it in its
/// worker role (the CLI gives its own executable and `worker`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl OpenOptions {
    /// These options with `flag` set to `value` (a switch's value is "true").
    pub fn with(mut self, flag: &str, value: &str) -> OpenOptions {
        self.given.insert(flag.to_string(), value.to_string());
        self
    }

    /// These options, opened in worker processes started by `command`.
    pub fn in_workers(mut self, command: WorkerCommand) -> OpenOptions {
        self.worker = Some(command);
        self
    }

    /// Whether the switch `flag` was given.
    pub fn switch(&self, flag: &str) -> bool {
        self.given.get(flag).is_some_and(|v| v == "true")
    }

    /// The value given for the choice or text `flag`, if any (the driver applies its default).
    pub fn choice(&self, flag: &str) -> Option<&str> {
        self.given.get(flag).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_reads_back_what_was_given_and_nothing_else() {
        let o = OpenOptions::default()
            .with("vk-validation", "true")
            .with("cuda-compiler", "ptx");
        assert!(o.switch("vk-validation"));
        assert!(!o.switch("other-switch"));
        assert_eq!(o.choice("cuda-compiler"), Some("ptx"));
        assert_eq!(o.choice("vk-validation"), Some("true"));
        assert_eq!(o.choice("missing"), None);
        assert!(!OpenOptions::default().switch("vk-validation"));
    }
}
