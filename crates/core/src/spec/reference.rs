//! A written buffer's expected contents from a file (`reference = "y.npy"` in its `[[args]]`
//! table): raw little-endian elements of the buffer's type, or a NumPy `.npy` array (format
//! versions 1 to 3, little-endian, C order), its type and length held against the buffer's.
//! Every error says what is wrong with the file, in one line; the caller names the file.

use std::path::Path;

use super::decl::{ArgDecl, BufferDecl};
use crate::program::ScalarType;

/// The first bytes of every `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// Each buffer's `reference` as a path from here: the spec names it relative to `dir`, its
/// own directory.
pub(crate) fn resolve(args: &mut [ArgDecl], dir: &Path) {
    for a in args {
        if let ArgDecl::Buffer(BufferDecl {
            reference: Some(r), ..
        }) = a
        {
            *r = dir.join(&*r).display().to_string();
        }
    }
}

/// The file at `path` read as the expected contents of a buffer of `elements` elements of
/// `ty`: its element bytes, or what is wrong with it.
pub(crate) fn read(path: &str, ty: ScalarType, elements: u64) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    match bytes.starts_with(NPY_MAGIC) {
        true => npy(bytes, ty, elements),
        false if path.ends_with(".npy") => Err(format!(
            "is not a .npy file (it does not start with {:?}): save it with numpy.save, or \
             give raw little-endian {ty} elements in a file of another extension",
            String::from_utf8_lossy(&NPY_MAGIC[1..])
        )),
        false => raw(bytes, ty, elements),
    }
}

/// Raw little-endian elements: exactly `elements` of them.
fn raw(bytes: Vec<u8>, ty: ScalarType, elements: u64) -> Result<Vec<u8>, String> {
    let want = elements.saturating_mul(ty.size() as u64);
    match bytes.len() as u64 == want {
        true => Ok(bytes),
        false => Err(format!(
            "is {} bytes of raw little-endian {ty}, {} elements; the buffer has {elements} \
             ({want} bytes)",
            bytes.len(),
            bytes.len() as f64 / ty.size() as f64
        )),
    }
}

/// The `descr` a little-endian array of `ty` has in a `.npy` header.
fn descr(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::I32 => "<i4",
        ScalarType::U32 => "<u4",
        ScalarType::I64 => "<i8",
        ScalarType::U64 => "<u8",
        ScalarType::F32 => "<f4",
        ScalarType::F64 => "<f8",
    }
}

/// A `.npy` file: its header checked against the buffer, then its data.
fn npy(mut bytes: Vec<u8>, ty: ScalarType, elements: u64) -> Result<Vec<u8>, String> {
    let short = || "ends inside its .npy header".to_string();
    let (major, minor) = (bytes.get(6).copied(), bytes.get(7).copied());
    let (len_at, width) = match major {
        Some(1) => (8, 2),
        Some(2 | 3) => (8, 4),
        _ => {
            let (a, b) = (major.unwrap_or(0), minor.unwrap_or(0));
            return Err(format!(
                "is .npy format {a}.{b}, which blocksweep does not read (1.0 to 3.0)"
            ));
        }
    };
    let mut len = [0u8; 4];
    len[..width].copy_from_slice(bytes.get(len_at..len_at + width).ok_or_else(short)?);
    let start = len_at + width;
    let end = start + u32::from_le_bytes(len) as usize;
    let header = bytes.get(start..end).ok_or_else(short)?;
    let header = String::from_utf8_lossy(header).to_string();
    let header = Header::parse(&header)?;
    if header.descr != descr(ty) {
        return Err(format!(
            "holds '{}' elements; the buffer is {ty}, which a .npy file holds as '{}'",
            header.descr,
            descr(ty)
        ));
    }
    let multi = header.shape.iter().filter(|&&d| d > 1).count() > 1;
    if header.fortran && multi {
        return Err("is in Fortran order; save it in C order \
                    (numpy.save(f, numpy.ascontiguousarray(a)))"
            .into());
    }
    let count = (header.shape.iter()).try_fold(1u64, |n, &d| n.checked_mul(d));
    if count != Some(elements) {
        let dims: Vec<String> = header.shape.iter().map(u64::to_string).collect();
        return Err(format!(
            "has shape ({}), {} elements; the buffer has {elements}",
            dims.join(", "),
            count.map_or("too many".to_string(), |c| c.to_string())
        ));
    }
    let data = bytes.split_off(end);
    let want = elements.saturating_mul(ty.size() as u64);
    match data.len() as u64 == want {
        true => Ok(data),
        false => Err(format!(
            "holds {} bytes of data after its header, where its shape says {want}",
            data.len()
        )),
    }
}

/// The three keys of a `.npy` header, a Python dict literal such as
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (1024,), }`.
struct Header {
    descr: String,
    fortran: bool,
    shape: Vec<u64>,
}

impl Header {
    fn parse(text: &str) -> Result<Header, String> {
        let bad = |what: &str| format!("has a .npy header without {what}: {}", text.trim());
        let descr = value_of(text, "descr").ok_or_else(|| bad("'descr'"))?;
        let descr = descr
            .strip_prefix('\'')
            .and_then(|d| d.split_once('\''))
            .map(|(d, _)| d.to_string())
            .ok_or_else(|| bad("a 'descr' string (a structured dtype?)"))?;
        let fortran = match value_of(text, "fortran_order") {
            Some(v) if v.starts_with("True") => true,
            Some(v) if v.starts_with("False") => false,
            _ => return Err(bad("'fortran_order'")),
        };
        let shape = value_of(text, "shape")
            .and_then(|v| v.strip_prefix('('))
            .and_then(|v| v.split_once(')'))
            .ok_or_else(|| bad("a 'shape' tuple"))?
            .0;
        let shape = (shape.split(',').map(str::trim).filter(|d| !d.is_empty()))
            .map(|d| {
                d.parse::<u64>()
                    .map_err(|_| bad("whole numbers in 'shape'"))
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Ok(Header {
            descr,
            fortran,
            shape,
        })
    }
}

/// The text after `'key':` in a header, trimmed at its start.
fn value_of<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(&format!("'{key}'"))?;
    let rest = text[at + key.len() + 2..].trim_start().strip_prefix(':')?;
    Some(rest.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file of format `major` with `header` (padded as numpy pads it) and `data`.
    fn npy_file(major: u8, header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = NPY_MAGIC.to_vec();
        out.extend([major, 0]);
        match major {
            1 => out.extend((h.len() as u16).to_le_bytes()),
            _ => out.extend((h.len() as u32).to_le_bytes()),
        }
        out.extend(h.as_bytes());
        out.extend(data);
        out
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn read_bytes(name: &str, bytes: &[u8], ty: ScalarType, n: u64) -> Result<Vec<u8>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        read(path.to_str().unwrap(), ty, n)
    }

    #[test]
    fn a_npy_array_of_the_buffers_type_and_length_is_its_data() {
        let data = f32s(&[1.0, 2.0, 3.0, 4.0]);
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
        for major in [1, 2] {
            let got = read_bytes("y.npy", &npy_file(major, h, &data), ScalarType::F32, 4);
            assert_eq!(got.unwrap(), data, "format {major}");
        }
        // A 2-D array in C order is the buffer's elements row after row.
        let h2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
        let got = read_bytes("y.npy", &npy_file(1, h2, &data), ScalarType::F32, 4);
        assert_eq!(got.unwrap(), data);
    }

    #[test]
    fn a_npy_array_of_another_type_shape_or_order_is_refused_saying_which() {
        let data = f32s(&[1.0, 2.0, 3.0, 4.0]);
        let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
        let file = npy_file(1, h, &data);
        let e = read_bytes("y.npy", &file, ScalarType::F64, 2).unwrap_err();
        assert!(e.contains("holds '<f4' elements; the buffer is f64"), "{e}");
        let e = read_bytes("y.npy", &file, ScalarType::F32, 5).unwrap_err();
        assert!(
            e.contains("has shape (4), 4 elements; the buffer has 5"),
            "{e}"
        );
        let hf = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }";
        let e = read_bytes("y.npy", &npy_file(1, hf, &data), ScalarType::F32, 4).unwrap_err();
        assert!(e.contains("Fortran order"), "{e}");
        let hb = "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }";
        let e = read_bytes("y.npy", &npy_file(1, hb, &data), ScalarType::F32, 4).unwrap_err();
        assert!(e.contains("holds '>f4' elements"), "{e}");
        let e = read_bytes("y.npy", &file[..20], ScalarType::F32, 4).unwrap_err();
        assert!(e.contains("ends inside its .npy header"), "{e}");
        let e = read_bytes("y.npy", &data, ScalarType::F32, 4).unwrap_err();
        assert!(e.contains("is not a .npy file"), "{e}");
    }

    #[test]
    fn a_raw_file_is_the_buffers_bytes_exactly() {
        let data = f32s(&[1.0, 2.0, 3.0]);
        let got = read_bytes("y.f32", &data, ScalarType::F32, 3);
        assert_eq!(got.unwrap(), data);
        let e = read_bytes("y.f32", &data, ScalarType::F32, 4).unwrap_err();
        assert!(
            e.contains("is 12 bytes of raw little-endian f32, 3 elements; the buffer has 4"),
            "{e}"
        );
        let e = read("/nonexistent/y.bin", ScalarType::F32, 4).unwrap_err();
        assert!(e.starts_with("cannot read it: "), "{e}");
    }
}
