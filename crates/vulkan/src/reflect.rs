//! The few facts of a SPIR-V module the argument contract needs, read from its words: entry
//! points, storage and uniform buffer bindings, the push-constant block's extent, and the
//! specialisation constant IDs. Enough to refuse, with both counts, a kernel whose bindings
//! contradict its spec before Vulkan meets undefined behaviour.

use std::collections::{BTreeSet, HashMap};

const MAGIC: u32 = 0x0723_0203;

// Opcodes, decorations, storage classes and execution models (SPIR-V specification, 3.x).
const OP_ENTRY_POINT: u32 = 15;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_TYPE_VECTOR: u32 = 23;
const OP_TYPE_MATRIX: u32 = 24;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_ARRAY_LENGTH: u32 = 68;
const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const DECORATION_SPEC_ID: u32 = 1;
const DECORATION_BUFFER_BLOCK: u32 = 3;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const DECORATION_OFFSET: u32 = 35;
const STORAGE_UNIFORM: u32 = 2;
const STORAGE_WORKGROUP: u32 = 4;
const STORAGE_PUSH_CONSTANT: u32 = 9;
const STORAGE_STORAGE_BUFFER: u32 = 12;
const MODEL_GL_COMPUTE: u32 = 5;

/// What [`reflect`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reflection {
    /// Names of the GLCompute entry points.
    pub entry_points: Vec<String>,
    /// (set, binding) of every storage buffer.
    pub storage: BTreeSet<(u32, u32)>,
    /// (set, binding) of every uniform buffer, which the contract has no place for.
    pub uniform: BTreeSet<(u32, u32)>,
    /// (set, binding) of every buffer declared as an array of descriptors.
    pub arrays: BTreeSet<(u32, u32)>,
    /// Some(extent in bytes, where every member's size is known) if a push-constant block is
    /// declared.
    pub push_constants: Option<Option<u32>>,
    /// Every SpecId decoration's constant ID.
    pub spec_ids: BTreeSet<u32>,
    /// The push-constant block's members: (offset, size where known), in member order.
    pub push_members: Vec<(u32, Option<u32>)>,
    /// Bindings (set, binding) whose runtime array's length the shader reads (`.length()`,
    /// OpArrayLength): their binding must end where the kernel's buffer ends.
    pub length_read: BTreeSet<(u32, u32)>,
    /// Bytes of the Workgroup (shared) variables whose sizes are constants: the shader's
    /// static shared memory. An array sized by a specialisation constant is not counted
    /// (it is the launch's dynamic part).
    pub workgroup_bytes: u64,
}

/// The types and decorations gathered in one pass, resolved afterwards.
#[derive(Default)]
struct Module {
    decorations: HashMap<(u32, u32), u32>,
    buffer_blocks: BTreeSet<u32>,
    member_offsets: HashMap<(u32, u32), u32>,
    /// id → byte size of scalar and vector types.
    sizes: HashMap<u32, u32>,
    structs: HashMap<u32, Vec<u32>>,
    arrays: BTreeSet<u32>,
    /// Array type id → (element type, length id), for sized arrays.
    sized_arrays: HashMap<u32, (u32, u32)>,
    /// Matrix type id → (column type, columns).
    matrices: HashMap<u32, (u32, u32)>,
    /// Integer constants' values by id.
    constants: HashMap<u32, u64>,
    pointers: HashMap<u32, u32>,
    /// (pointer type, storage class) of each global variable.
    variables: Vec<(u32, u32, u32)>,
    /// Variables whose runtime array's length is read.
    length_of: BTreeSet<u32>,
}

/// Reads `words` (a whole module); `Err` says why they are not SPIR-V.
pub(crate) fn reflect(words: &[u32]) -> Result<Reflection, String> {
    match words.first() {
        Some(&MAGIC) if words.len() >= 5 => {}
        Some(&w) if w == MAGIC.swap_bytes() => {
            return Err("the SPIR-V is big-endian; Vulkan takes little-endian words".into())
        }
        _ => return Err("not a SPIR-V module (no magic number 0x07230203)".into()),
    }
    let mut m = Module::default();
    let mut r = Reflection::default();
    let mut at = 5;
    while at < words.len() {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        if count == 0 || at + count > words.len() {
            return Err(format!(
                "instruction at word {at} runs past the module's end"
            ));
        }
        m.read(op, &words[at + 1..at + count], &mut r);
        at += count;
    }
    m.resolve(&mut r);
    Ok(r)
}

impl Module {
    fn read(&mut self, op: u32, ops: &[u32], r: &mut Reflection) {
        let at = |i: usize| ops.get(i).copied().unwrap_or(0);
        match op {
            OP_ENTRY_POINT if at(0) == MODEL_GL_COMPUTE => r
                .entry_points
                .push(literal_string(ops.get(2..).unwrap_or(&[]))),
            OP_DECORATE => match at(1) {
                DECORATION_SPEC_ID => {
                    r.spec_ids.insert(at(2));
                }
                DECORATION_BUFFER_BLOCK => {
                    self.buffer_blocks.insert(at(0));
                }
                d @ (DECORATION_BINDING | DECORATION_DESCRIPTOR_SET) => {
                    self.decorations.insert((at(0), d), at(2));
                }
                _ => {}
            },
            OP_MEMBER_DECORATE if at(2) == DECORATION_OFFSET => {
                self.member_offsets.insert((at(0), at(1)), at(3));
            }
            OP_TYPE_INT | OP_TYPE_FLOAT => {
                self.sizes.insert(at(0), at(1) / 8);
            }
            OP_TYPE_VECTOR => {
                if let Some(&c) = self.sizes.get(&at(1)) {
                    self.sizes.insert(at(0), c * at(2));
                }
            }
            OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY => {
                self.arrays.insert(at(0));
                if op == OP_TYPE_ARRAY {
                    self.sized_arrays.insert(at(0), (at(1), at(2)));
                }
            }
            OP_TYPE_MATRIX => {
                self.matrices.insert(at(0), (at(1), at(2)));
            }
            OP_CONSTANT => {
                self.constants.insert(at(1), at(2) as u64);
            }
            OP_TYPE_STRUCT => {
                self.structs
                    .insert(at(0), ops.get(1..).unwrap_or(&[]).to_vec());
            }
            OP_TYPE_POINTER => {
                self.pointers.insert(at(0), at(2));
            }
            OP_VARIABLE => self.variables.push((at(0), at(1), at(2))),
            OP_ARRAY_LENGTH => {
                self.length_of.insert(at(2));
            }
            _ => {}
        }
    }

    fn resolve(&self, r: &mut Reflection) {
        for &(pointer, id, class) in &self.variables {
            let pointee = self.pointers.get(&pointer).copied().unwrap_or(0);
            let get = |d| self.decorations.get(&(id, d)).copied().unwrap_or(0);
            let place = (get(DECORATION_DESCRIPTOR_SET), get(DECORATION_BINDING));
            match class {
                STORAGE_PUSH_CONSTANT => {
                    r.push_constants = Some(self.extent(pointee));
                    r.push_members = self.members(pointee);
                }
                STORAGE_WORKGROUP => r.workgroup_bytes += self.size_of(pointee).unwrap_or(0),
                STORAGE_STORAGE_BUFFER | STORAGE_UNIFORM => {
                    if self.arrays.contains(&pointee) {
                        r.arrays.insert(place);
                    } else if class == STORAGE_UNIFORM && !self.buffer_blocks.contains(&pointee) {
                        r.uniform.insert(place);
                    } else {
                        r.storage.insert(place);
                        if self.length_of.contains(&id) {
                            r.length_read.insert(place);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// A type's size in bytes, where it is made of scalars, vectors, matrices, constant-sized
    /// arrays and structs (packed: Workgroup variables have no explicit layout).
    fn size_of(&self, ty: u32) -> Option<u64> {
        if let Some(&s) = self.sizes.get(&ty) {
            return Some(s as u64);
        }
        if let Some(&(elem, len)) = self.sized_arrays.get(&ty) {
            return Some(self.size_of(elem)? * self.constants.get(&len)?);
        }
        if let Some(&(column, count)) = self.matrices.get(&ty) {
            return Some(self.size_of(column)? * count as u64);
        }
        let members = self.structs.get(&ty)?;
        members.iter().map(|&m| self.size_of(m)).sum()
    }

    /// A block's members as (offset, size where known).
    fn members(&self, ty: u32) -> Vec<(u32, Option<u32>)> {
        let Some(members) = self.structs.get(&ty) else {
            return Vec::new();
        };
        members
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let offset = *self.member_offsets.get(&(ty, i as u32))?;
                Some((offset, self.sizes.get(m).copied()))
            })
            .collect()
    }

    /// The end of a struct's last byte, where every member is a scalar or a vector.
    fn extent(&self, ty: u32) -> Option<u32> {
        let members = self.structs.get(&ty)?;
        let mut end = 0;
        for (i, member) in members.iter().enumerate() {
            let offset = self.member_offsets.get(&(ty, i as u32))?;
            end = end.max(offset + self.sizes.get(member)?);
        }
        Some(end)
    }
}

/// Where the spec's scalars sit in the push-constant block (std430, in argument order): each
/// as (name, type, offset), and the block's size.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PushLayout {
    pub scalars: Vec<(String, String, u32, u32)>,
    pub bytes: u32,
}

impl PushLayout {
    /// "k (f32) at 0, n (u64) at 8".
    fn describe(&self) -> String {
        let each: Vec<String> = self
            .scalars
            .iter()
            .map(|(name, ty, at, _)| format!("{name} ({ty}) at {at}"))
            .collect();
        each.join(", ")
    }

    /// The scalar whose bytes hold `offset`, if any.
    fn holding(&self, offset: u32) -> Option<&(String, String, u32, u32)> {
        self.scalars
            .iter()
            .find(|(_, _, at, size)| offset >= *at && offset < at + size)
    }
}

impl Reflection {
    /// The push-constant block against the spec's scalars, both ways: the same size, and no
    /// member in the padding between two scalars or across one's edge.
    fn check_push(&self, push: &PushLayout) -> Result<(), String> {
        let spec = || match push.scalars.is_empty() {
            true => "the spec has no scalars".to_string(),
            false => format!(
                "the spec's scalars take {} bytes ({})",
                push.bytes,
                push.describe()
            ),
        };
        match self.push_constants {
            None if push.bytes > 0 => {
                return Err(format!(
                    "the shader declares no push-constant block, but {}: declare them as one \
                     `layout(push_constant) uniform` block, std430, in argument order",
                    spec()
                ))
            }
            None => return Ok(()),
            Some(_) if push.bytes == 0 => {
                return Err("the shader declares push constants, the spec no scalars".into())
            }
            Some(Some(extent)) if extent != push.bytes => {
                let which = if extent < push.bytes {
                    "smaller"
                } else {
                    "larger"
                };
                return Err(format!(
                    "the shader's push-constant block is {extent} bytes, {which} than the \
                     spec's: {} (std430, in argument order; a u64 is 8 bytes: uvec2 or \
                     uint64_t); the shader's block has {}",
                    spec(),
                    self.push_layout()
                ));
            }
            _ => {}
        }
        for (i, &(offset, size)) in self.push_members.iter().enumerate() {
            let size = size.unwrap_or(1);
            let held = push.holding(offset);
            let fits = held.is_some_and(|(_, _, at, s)| offset + size <= at + s);
            if !fits {
                let place = match held {
                    Some((name, ty, _, _)) => format!("crosses the end of {name} ({ty})"),
                    None => "lies in the padding between the spec's scalars".to_string(),
                };
                return Err(format!(
                    "push-constant member {i} (offset {offset}, {size} bytes) {place}: the \
                     shader's block has {}; {}",
                    self.push_layout(),
                    spec()
                ));
            }
        }
        Ok(())
    }
}

impl Reflection {
    /// The shader's push-constant members as the spec's layout is said: "member 0 at 0 (4
    /// bytes), member 1 at 4 (4 bytes)"; a member of unknown size says so.
    fn push_layout(&self) -> String {
        let members: Vec<String> = (self.push_members.iter().enumerate())
            .map(|(i, &(offset, size))| match size {
                Some(n) => format!("member {i} at {offset} ({n} bytes)"),
                None => format!("member {i} at {offset} (size unknown)"),
            })
            .collect();
        match members.is_empty() {
            true => "no members".into(),
            false => members.join(", "),
        }
    }
}

/// A nul-terminated UTF-8 literal packed four bytes a word, little end first.
fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Reflection {
    /// Whether this module fits the contract for entry point `entry`, `buffers` storage buffers
    /// and the spec's scalars in the push-constant block (`push`); `Err` says how it does not.
    pub fn check(&self, entry: &str, buffers: usize, push: &PushLayout) -> Result<(), String> {
        if !self.entry_points.iter().any(|e| e == entry) {
            return Err(format!(
                "the SPIR-V has no compute entry point `{entry}` (it has: {})",
                self.entry_points.join(", ")
            ));
        }
        if let Some((set, binding)) = self.uniform.iter().next() {
            return Err(format!(
                "binding {binding} of set {set} is a uniform buffer; the contract passes \
                 buffers as storage buffers (`buffer` blocks)"
            ));
        }
        if let Some((set, binding)) = self.arrays.iter().next() {
            return Err(format!(
                "binding {binding} of set {set} is an array of buffers; the contract binds \
                 one buffer per binding"
            ));
        }
        if let Some((set, binding)) = self.storage.iter().find(|(s, _)| *s != 0) {
            return Err(format!(
                "binding {binding} is in descriptor set {set}; the contract uses set 0 only"
            ));
        }
        let bound: Vec<u32> = self.storage.iter().map(|&(_, b)| b).collect();
        if bound.len() != buffers {
            return Err(format!(
                "the shader binds {} storage buffers, the spec declares {buffers} buffers",
                bound.len()
            ));
        }
        if bound.iter().zip(0..).any(|(&b, i)| b != i) {
            return Err(format!(
                "the shader's storage buffers are at bindings {bound:?}; the contract binds the \
                 spec's {buffers} buffers at 0..{buffers}"
            ));
        }
        self.check_push(push)?;
        if !self.spec_ids.contains(&0) {
            return Err(
                "the workgroup size is fixed: declare `layout(local_size_x_id = 0, \
                 local_size_y_id = 1, local_size_z_id = 2) in;` so each launch sets it"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "reflect_tests.rs"]
mod tests;
