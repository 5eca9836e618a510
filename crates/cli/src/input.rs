//! Results files read back (`compare`): whole, capped in size, each error one line naming the
//! path and the cause.

use std::io::Read;
use std::path::Path;

use crate::output::describe;

/// The most a results file may hold. A 4096-row, three-API run is a few MiB of JSON; anything
/// larger is not one (and `/dev/zero` or a runaway pipe would fill memory until the process
/// died).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads a whole results file of at most `cap` bytes as UTF-8; each error is one line naming
/// the path and the cause.
pub fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| format!("{shown}: {}", describe(&e)))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{shown} is a directory, not a results file"));
    }
    let mut bytes = Vec::new();
    (&mut f)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {}", describe(&e)))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "{shown} holds more than {} MiB: not a blocksweep results file",
            cap >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown}: not JSON: the file is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_streams_and_names_causes() {
        let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(
            e,
            "/dev/zero holds more than 1 MiB: not a blocksweep results file"
        );
        let e = read_capped(Path::new("/"), 1 << 20).unwrap_err();
        assert_eq!(e, "/ is a directory, not a results file");
        let e = read_capped(Path::new("/no/such/file.json"), 1 << 20).unwrap_err();
        assert_eq!(e, "/no/such/file.json: No such file or directory");
        let d = std::env::temp_dir().join(format!("blocksweep-compare-{}", std::process::id()));
        std::fs::write(&d, [0xff, 0xfe, b'{']).unwrap();
        let e = read_capped(&d, 1 << 20).unwrap_err();
        assert!(e.ends_with("not JSON: the file is not UTF-8 text"), "{e}");
        std::fs::write(&d, "{}").unwrap();
        assert_eq!(read_capped(&d, 2).unwrap(), "{}");
        assert!(read_capped(&d, 1).is_err());
        let _ = std::fs::remove_file(&d);
    }
}
