//! What an API's checking layer said (`Backend::diagnostics`: every message of the run), as
//! that API's failure. The pipeline looks once per API, after its turn, so each message is
//! reported once however often the turn went back to the backend.

use crate::backend::Backend;
use crate::report::{Failure, FailureKind};

/// What `backend`'s checking layer said, as the API's failure (the run is not clean, whatever
/// its outputs say); `None` where it said nothing. The one wording every command uses.
pub(super) fn checking_layer(backend: &dyn Backend) -> Option<Failure> {
    let said = backend.diagnostics();
    (!said.is_empty()).then(|| {
        let message = format!("{} validation message(s): {}", said.len(), said.join(" | "));
        Failure::new(backend.api(), FailureKind::Validation, message)
    })
}

#[cfg(test)]
mod tests {
    use super::checking_layer;
    use crate::testing::{HostBackend, TEST_API_A};

    #[test]
    fn what_the_layer_said_is_one_failure_in_one_wording() {
        let mut b = HostBackend::new(TEST_API_A);
        assert!(checking_layer(&b).is_none());
        b.said = vec!["VUID-1".into(), "VUID-2".into()];
        let f = checking_layer(&b).unwrap();
        assert_eq!(f.api, TEST_API_A);
        assert_eq!(f.message, "2 validation message(s): VUID-1 | VUID-2");
    }
}
