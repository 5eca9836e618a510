//! What each API's checking layer said (`Backend::diagnostics`, every message so far) turned
//! into what it said since the last look, so a command that looks more than once (the lab,
//! once per thread count) reports each message once.

use crate::backend::{Api, Backend};
use crate::report::Failure;

/// How many messages of each API were reported already.
#[derive(Debug, Default)]
pub struct Said {
    seen: Vec<(Api, usize)>,
}

impl Said {
    /// The messages `backend` has said since the last call for its API.
    pub fn new_messages(&mut self, backend: &dyn Backend) -> Vec<String> {
        let all = backend.diagnostics();
        let api = backend.api();
        let seen = match self.seen.iter_mut().find(|(a, _)| *a == api) {
            Some((_, n)) => n,
            None => {
                self.seen.push((api, 0));
                &mut self.seen.last_mut().expect("just pushed").1
            }
        };
        let new = all.iter().skip(*seen).cloned().collect();
        *seen = all.len();
        new
    }

    /// What `backend`'s checking layer said since the last look, as the API's failure (the
    /// run is not clean, whatever its outputs say); `None` where it said nothing new. The one
    /// wording every command uses.
    pub fn failure(&mut self, backend: &dyn Backend) -> Option<Failure> {
        let said = self.new_messages(backend);
        (!said.is_empty()).then(|| Failure {
            api: backend.api(),
            message: format!("{} validation message(s): {}", said.len(), said.join(" | ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Said;
    use crate::testing::{HostBackend, TEST_API_A};

    #[test]
    fn each_message_is_new_once() {
        let mut b = HostBackend::new(TEST_API_A);
        let mut said = Said::default();
        assert!(said.new_messages(&b).is_empty());
        b.said = vec!["VUID-1".into()];
        assert_eq!(said.new_messages(&b), ["VUID-1"]);
        assert!(said.new_messages(&b).is_empty(), "said twice");
        b.said.push("VUID-2".into());
        assert_eq!(said.new_messages(&b), ["VUID-2"]);
        b.said.push("VUID-3".into());
        let f = said.failure(&b).unwrap();
        assert_eq!(f.message, "1 validation message(s): VUID-3");
        assert!(said.failure(&b).is_none());
    }
}
