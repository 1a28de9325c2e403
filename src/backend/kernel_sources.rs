//! The device kernels' sources, in build order, for each runtime: the runtime's dialect header
//! (`kernels/dialect/opencl.h`, `kernels/dialect/cuda.h`) first, then one file per kernel family
//! of [`KERNELS`](crate::backend::ops::KERNELS), `kernels/<family>.kc`, the same text for both
//! runtimes (each family is written once).
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

/// A family's source.
macro_rules! shared {
    ($family:literal) => {
        KernelSource {
            family: $family,
            path: concat!("kernels/", $family, ".kc"),
            text: include_str!(concat!("../../kernels/", $family, ".kc")),
        }
    };
}

/// A runtime's dialect header.
macro_rules! dialect {
    ($name:literal) => {
        KernelSource {
            family: "dialect",
            path: concat!("kernels/dialect/", $name, ".h"),
            text: include_str!(concat!("../../kernels/dialect/", $name, ".h")),
        }
    };
}

/// The sources of both runtimes from one list of families, in build order.
macro_rules! sources {
    ($($family:literal),* $(,)?) => {
        /// The OpenCL sources in build order.
        pub const OPENCL: &[KernelSource] = &[
            dialect!("opencl"),
            $(shared!($family),)*
        ];

        /// The CUDA sources in build order.
        pub const CUDA: &[KernelSource] = &[
            dialect!("cuda"),
            $(shared!($family),)*
        ];
    };
}

sources!(
    "vector",
    "spmv",
    "cg",
    "bicgstab",
    "gmres",
    "precond",
    "trsv",
    "isai",
    "bilu",
    "ip_assemble",
    "ip",
    "fsai",
    "halo",
    "resident",
    "sparse",
    "amg_setup",
);

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
        for (cl, cu) in OPENCL.iter().zip(CUDA).skip(1) {
            assert_eq!(cl.text, cu.text, "{} is written once", cl.family);
        }
    }
}
