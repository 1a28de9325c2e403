//! The device kernels' sources, in build order, for each runtime: the runtime's dialect header
//! (`kernels/dialect/opencl.h`, `kernels/dialect/cuda.h`) first, then one file per kernel family
//! of [`KERNELS`](crate::backend::ops::KERNELS). A family written once lives in
//! `kernels/<family>.kc` and is the same text in both lists; a family not yet moved there still
//! has one file per runtime (`kernels-cl/<family>.cl`, `kernels-cu/<family>.cu`).
//! `kernels/README.md` says how the sources are written and how to add a kernel.

/// One source file of a runtime's build.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// The kernel family (a name of [`KERNELS`](crate::backend::ops::KERNELS)), or `"dialect"`
    /// for the runtime's header.
    pub family: &'static str,
    /// The file's path in the repository (compiler messages name it).
    pub path: &'static str,
    /// The file's text.
    pub text: &'static str,
}

/// A family written once, for both runtimes.
macro_rules! shared {
    ($family:literal) => {
        KernelSource {
            family: $family,
            path: concat!("kernels/", $family, ".kc"),
            text: include_str!(concat!("../../kernels/", $family, ".kc")),
        }
    };
}

/// A family still written once per runtime.
macro_rules! own {
    ($family:literal, $dir:literal, $ext:literal) => {
        KernelSource {
            family: $family,
            path: concat!($dir, "/", $family, ".", $ext),
            text: include_str!(concat!("../../", $dir, "/", $family, ".", $ext)),
        }
    };
}

/// The OpenCL sources in build order (`resident` last: it ends with `FP_CONTRACT OFF`).
pub const OPENCL: &[KernelSource] = &[
    KernelSource {
        family: "dialect",
        path: "kernels/dialect/opencl.h",
        text: include_str!("../../kernels/dialect/opencl.h"),
    },
    shared!("vector"),
    own!("spmv", "kernels-cl", "cl"),
    own!("cg", "kernels-cl", "cl"),
    own!("bicgstab", "kernels-cl", "cl"),
    own!("gmres", "kernels-cl", "cl"),
    shared!("precond"),
    shared!("trsv"),
    shared!("isai"),
    shared!("bilu"),
    shared!("ip_assemble"),
    shared!("ip"),
    shared!("fsai"),
    shared!("halo"),
    own!("resident", "kernels-cl", "cl"),
];

/// The CUDA sources in build order.
pub const CUDA: &[KernelSource] = &[
    KernelSource {
        family: "dialect",
        path: "kernels/dialect/cuda.h",
        text: include_str!("../../kernels/dialect/cuda.h"),
    },
    shared!("vector"),
    own!("spmv", "kernels-cu", "cu"),
    own!("cg", "kernels-cu", "cu"),
    own!("bicgstab", "kernels-cu", "cu"),
    own!("gmres", "kernels-cu", "cu"),
    shared!("precond"),
    shared!("trsv"),
    shared!("isai"),
    shared!("bilu"),
    shared!("ip_assemble"),
    shared!("ip"),
    shared!("fsai"),
    shared!("halo"),
    own!("resident", "kernels-cu", "cu"),
];

/// The source of `family` in `sources`.
pub fn family_source(sources: &[KernelSource], family: &str) -> Option<&'static str> {
    sources.iter().find(|s| s.family == family).map(|s| s.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_runtimes_build_every_family_in_the_same_order() {
        let families = |s: &[KernelSource]| s.iter().map(|k| k.family).collect::<Vec<_>>();
        assert_eq!(families(OPENCL), families(CUDA));
        let mut expected = vec!["dialect"];
        expected.extend(crate::backend::ops::KERNELS.iter().map(|(f, _)| *f));
        let mut listed = families(OPENCL);
        listed.sort_unstable();
        expected.sort_unstable();
        assert_eq!(listed, expected);
        for (cl, cu) in OPENCL.iter().zip(CUDA) {
            if cl.path.starts_with("kernels/") && cl.family != "dialect" {
                assert_eq!(cl.path, cu.path, "a shared family is shared by both");
            }
        }
    }
}
