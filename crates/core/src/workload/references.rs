//! What a user's kernel is compared with. At every size: the same API's output at its first
//! size (a correct kernel does not depend on its launch). Across APIs: once every API has
//! been measured, the reference outputs of the APIs that passed their own checks are
//! compared pairwise, and the API that disagrees with the others is the one named
//! ([`References::conclude`]); an API that failed its own checks is compared with nobody.
//! Outputs compared by their sum (partials per block, which depend on the launch) are
//! compared across APIs at the same block only.

use super::diagnosis::{first_difference, OwnRows};
use crate::backend::{Api, Launch};
use crate::blocks::BlockSize;
use crate::report::{Failure, FailureKind};
use crate::spec::{compare, CompareMode, Instance};
use crate::sweep::SweepError;

/// The written buffers' contents after one checked dispatch (the kernel's part of each, in
/// written-buffer order), with the launch that made them.
#[derive(Clone)]
pub(crate) struct Checked {
    pub api: Api,
    pub block: BlockSize,
    pub grid: String,
    /// Shared: an API's first row is both its reference and the tune's (a 33 MB copy each).
    pub outputs: std::sync::Arc<Vec<super::guard::Output>>,
}

#[derive(Default)]
pub(crate) struct References {
    /// Each API's reference: its output at its first size.
    firsts: Vec<Checked>,
    /// Each API's outputs at each block, of the sum-compared buffers only (the others empty).
    sums: Vec<Checked>,
    /// APIs that failed a check of their own: compared with no other.
    failed: Vec<Api>,
}

impl References {
    /// Each API's reference outputs (its first size's), for a tune's check across parameter
    /// sets; an API that failed its own checks has none worth comparing.
    pub fn firsts(&self) -> Vec<(Api, Vec<Vec<u8>>)> {
        self.firsts
            .iter()
            .filter(|c| !self.failed.contains(&c.api))
            .map(|c| (c.api, c.outputs.iter().map(|o| o.to_vec()).collect()))
            .collect()
    }

    /// Notes that `api` failed a check of its own (a row's own check, or its launch
    /// independence): its outputs are compared with no other API's.
    pub fn fail(&mut self, api: Api) {
        if !self.failed.contains(&api) {
            self.failed.push(api);
        }
    }

    /// Checks one dispatch's `outputs` (which passed the row's own checks) against the spec's
    /// reference files and the API's own first size; the first call of an API (`own.first`
    /// empty) makes them its reference. A row that differs from that reference fails at once
    /// or is weighed with the others ([`OwnRows`]). `Ok` gives the outputs back where nothing
    /// kept them.
    pub fn check(
        &mut self,
        launch: Launch,
        instance: &Instance,
        here: Checked,
        own: &mut OwnRows,
    ) -> Result<Option<Checked>, SweepError> {
        let api = here.api;
        self.check_files(launch, instance, &here)?;
        if let Some((o, _)) = &own.first {
            let differs = first_difference(instance, o, &here).map(|(j, m)| {
                let b = instance.written().nth(j).map(|b| b.decl.name.clone());
                let detail = format!(
                    "{m}. The kernel's result depends on the launch: a loop that misses \
                     elements, or a kernel that needs the grid to cover the work \
                     (docs/kernels.md, \"What each check means\")"
                );
                let error = SweepError::Output {
                    api,
                    block: launch.block,
                    grid: launch.grid.to_string(),
                    buffer: b.unwrap_or_default(),
                    against: format!("its own output at block {} (its reference)", o.block),
                    detail,
                };
                (j, error)
            });
            if let Err(e) = own.note(instance, &here, launch, differs) {
                self.fail(api);
                return Err(e);
            }
        }
        // The sum-compared outputs only are kept for the comparison across APIs (the others
        // are compared through each API's first size, `firsts`).
        let kept = Checked {
            api: here.api,
            block: here.block,
            grid: here.grid.clone(),
            outputs: std::sync::Arc::new(
                instance
                    .written()
                    .zip(here.outputs.iter())
                    .map(|(b, out)| match b.decl.compare {
                        CompareMode::Sum => out.clone(),
                        CompareMode::Exact => Default::default(),
                    })
                    .collect(),
            ),
        };
        self.sums.push(kept);
        if own.first.is_none() {
            self.firsts.push(here.clone());
            own.first = Some((here, launch));
            return Ok(None);
        }
        Ok(Some(here))
    }

    /// Checks one dispatch's `outputs` against the spec's reference files, where it names any:
    /// the file is the judge, so an output that differs from it is the API's fault.
    fn check_files(
        &mut self,
        launch: Launch,
        instance: &Instance,
        here: &Checked,
    ) -> Result<(), SweepError> {
        let api = here.api;
        for (j, b) in instance.written().enumerate() {
            let (Some(expected), Some(file)) = (&b.reference, &b.decl.reference) else {
                continue;
            };
            compare(&b.decl, expected, &here.outputs[j], &instance.tolerance).map_err(|m| {
                self.fail(api);
                SweepError::Output {
                    api,
                    block: launch.block,
                    grid: launch.grid.to_string(),
                    buffer: b.decl.name.clone(),
                    against: format!("the reference file {file}"),
                    detail: format!(
                        "{m}. The file is what '{}' must hold, so {api}'s port is the wrong \
                         one at this launch",
                        b.decl.name
                    ),
                }
            })?;
        }
        Ok(())
    }

    /// Once every API has run: the APIs whose outputs disagree with the others', each with
    /// why. With three or more APIs, those outside the largest group that agrees are blamed;
    /// with two that disagree (or no two that agree), each is, since nothing says which is
    /// right.
    pub fn conclude(&self, instance: &Instance) -> Vec<Failure> {
        let apis: Vec<Api> = self
            .firsts
            .iter()
            .map(|c| c.api)
            .filter(|a| !self.failed.contains(a))
            .collect();
        if apis.len() < 2 {
            return Vec::new();
        }
        let n = apis.len();
        let mut differ = vec![vec![None; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                let d = self.difference(apis[i], apis[j], instance);
                differ[i][j] = d.clone();
                differ[j][i] = d;
            }
        }
        let group = largest_agreeing(&differ);
        // An API layered over another (WebGPU over Vulkan) runs on that API's driver: the two
        // agreeing is one witness, not two, and outvotes nobody.
        let shared = shared_driver(&apis, &group);
        let majority = group.len() >= 2 && shared.is_none();
        let blamed: Vec<usize> = match majority {
            true => (0..n).filter(|i| !group.contains(i)).collect(),
            false => (0..n)
                .filter(|&i| (0..n).any(|k| differ[i][k].is_some()))
                .collect(),
        };
        let mut blames = Vec::new();
        for i in blamed {
            let message = match majority {
                true => {
                    let names: Vec<String> =
                        group.iter().map(|&k| format!("{}'s", apis[k])).collect();
                    // Worded from the group's side: its output is what was expected.
                    let how = self.difference(apis[group[0]], apis[i], instance);
                    format!(
                        "its output differs from {}, which agree with each other: {}'s port \
                         is the wrong one ({})",
                        crate::words::and_list(&names),
                        apis[i],
                        how.unwrap_or_default()
                    )
                }
                false => {
                    let others: Vec<String> = (0..n)
                        .filter(|&k| differ[i][k].is_some())
                        .map(|k| format!("{}'s", apis[k]))
                        .collect();
                    let first = (0..n)
                        .find(|&k| differ[i][k].is_some())
                        .and_then(|k| self.difference(apis[k], apis[i], instance))
                        .unwrap_or_default();
                    let why = match &shared {
                        Some(words) => {
                            format!("the only APIs that agree run on one driver ({words})")
                        }
                        None => "no two APIs agree".to_string(),
                    };
                    let hint = match n {
                        2 => "a third API's source would; ",
                        _ => "",
                    };
                    format!(
                        "its output differs from {}, and {why}, so blocksweep cannot tell whose \
                         port is wrong ({hint}{first})",
                        crate::words::and_list(&others)
                    )
                }
            };
            blames.push(Failure::new(apis[i], FailureKind::WrongOutput, message));
        }
        blames
    }

    /// How `b`'s outputs differ from `a`'s, in words; `None` where they agree.
    fn difference(&self, a: Api, b: Api, instance: &Instance) -> Option<String> {
        let first = |api| self.firsts.iter().find(|c| c.api == api);
        let (fa, fb) = (first(a)?, first(b)?);
        for (j, buf) in instance.written().enumerate() {
            let found = match buf.decl.compare {
                CompareMode::Exact => compare(
                    &buf.decl,
                    &fa.outputs[j],
                    &fb.outputs[j],
                    &instance.tolerance,
                )
                .err()
                .map(|m| {
                    format!(
                        "'{}' at block {}, grid {} against {a}'s at block {}, grid {}: \
                                 {m}",
                        buf.decl.name, fb.block, fb.grid, fa.block, fa.grid
                    )
                }),
                CompareMode::Sum => self.sums_differ(a, b, j, instance),
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The first block both APIs ran where buffer `j`'s sums differ, in words.
    fn sums_differ(&self, a: Api, b: Api, j: usize, instance: &Instance) -> Option<String> {
        let decl = &instance.written().nth(j)?.decl;
        for x in self.sums.iter().filter(|c| c.api == a) {
            let Some(y) = self.sums.iter().find(|c| c.api == b && c.block == x.block) else {
                continue;
            };
            if let Err(m) = compare(decl, &x.outputs[j], &y.outputs[j], &instance.tolerance) {
                return Some(format!(
                    "'{}' at block {} against {a}'s at the same block: {m}",
                    decl.name, x.block
                ));
            }
        }
        None
    }
}

/// The indices of the largest set whose members all agree (`differ[i][j]` is `None`); the
/// first such set in index order where several are as large.
/// Where the agreeing `group` of `apis` holds no two independent witnesses, because each member
/// but one runs over another member (WebGPU over Vulkan): "WebGPU runs over Vulkan". `None`
/// where at least two members stand on drivers of their own, or the group is one API.
fn shared_driver(apis: &[Api], group: &[usize]) -> Option<String> {
    let under = |m: usize| {
        let over = apis[m].info().over?;
        group.iter().map(|&g| apis[g]).find(|a| a.key() == over)
    };
    let own = group.iter().filter(|&&m| under(m).is_none()).count();
    if group.len() < 2 || own >= 2 {
        return None;
    }
    let layers: Vec<String> = (group.iter())
        .filter_map(|&m| under(m).map(|u| format!("{} runs over {u}", apis[m])))
        .collect();
    Some(crate::words::and_list(&layers))
}

fn largest_agreeing(differ: &[Vec<Option<String>>]) -> Vec<usize> {
    let n = differ.len();
    let mut best: Vec<usize> = Vec::new();
    for mask in 1u32..(1 << n) {
        let members: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let agree = members
            .iter()
            .all(|&i| members.iter().all(|&j| i == j || differ[i][j].is_none()));
        let better = members.len() > best.len() || (members.len() == best.len() && members < best);
        if agree && better {
            best = members;
        }
    }
    // Two groups of the same size: no majority, so nobody is "the" group.
    let ties = (1u32..(1 << n)).filter(|mask| {
        let members: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        members.len() == best.len()
            && members != best
            && members
                .iter()
                .all(|&i| members.iter().all(|&j| i == j || differ[i][j].is_none()))
    });
    match ties.count() {
        0 => best,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{largest_agreeing, shared_driver};

    fn matrix(n: usize, disagree: &[(usize, usize)]) -> Vec<Vec<Option<String>>> {
        let mut m = vec![vec![None; n]; n];
        for &(i, j) in disagree {
            m[i][j] = Some("differs".into());
            m[j][i] = Some("differs".into());
        }
        m
    }

    #[test]
    fn the_api_that_disagrees_with_two_that_agree_is_outside_the_group() {
        // 0 and 2 agree; 1 disagrees with both.
        assert_eq!(largest_agreeing(&matrix(3, &[(0, 1), (1, 2)])), vec![0, 2]);
    }

    #[test]
    fn two_that_disagree_leave_no_group() {
        assert!(largest_agreeing(&matrix(2, &[(0, 1)])).len() < 2);
        assert!(largest_agreeing(&matrix(3, &[(0, 1), (1, 2), (0, 2)])).len() < 2);
    }

    #[test]
    fn all_agreeing_is_one_group() {
        assert_eq!(largest_agreeing(&matrix(3, &[])), vec![0, 1, 2]);
    }

    /// Gamma runs over Beta (as WebGPU over Vulkan): the two agreeing are one witness, so they
    /// outvote nobody; Alpha beside either is a second, independent one.
    #[test]
    fn a_layer_and_the_api_under_it_are_one_witness() {
        use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};
        let apis = [TEST_API_A, TEST_API_B, TEST_API_C];
        assert_eq!(
            shared_driver(&apis, &[1, 2]).as_deref(),
            Some("Gamma runs over Beta")
        );
        assert_eq!(shared_driver(&apis, &[0, 1]), None);
        assert_eq!(shared_driver(&apis, &[0, 2]), None);
        assert_eq!(shared_driver(&apis, &[0, 1, 2]), None);
        assert_eq!(shared_driver(&apis, &[2]), None);
    }
}
