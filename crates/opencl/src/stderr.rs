//! PoCL's compiler (clang, in the process) prints its diagnostic count ("1 error generated.")
//! on the process's own stderr, beside the build log where the diagnostics themselves are.
//! A build runs with fd 2 sent to a scratch file; the count lines are dropped, anything else
//! is passed on to stderr unchanged.

/// Runs `f` (a build) with the process's stderr captured by the core; what `f`'s compiler
/// printed there, less clang's diagnostic counts, is written to stderr afterwards.
pub(crate) fn quieted<T>(f: impl FnOnce() -> T) -> T {
    blocksweep_core::stderr::quieted(is_count, f)
}

fn is_count(line: &str) -> bool {
    let Some(rest) = line.strip_suffix(" generated.") else {
        return false;
    };
    rest.split(" and ").all(|part| {
        let mut words = part.split(' ');
        let number = words.next().is_some_and(|n| n.parse::<u64>().is_ok());
        let noun = words.next();
        number
            && matches!(noun, Some("error" | "errors" | "warning" | "warnings"))
            && words.next().is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_clangs_count_lines_are_dropped() {
        assert!(is_count("1 error generated."));
        assert!(is_count("2 warnings generated."));
        assert!(is_count("1 error and 3 warnings generated."));
        assert!(!is_count("real driver words"));
        assert!(!is_count("code generated."));
        assert!(!is_count("an error generated."));
    }
}
