//! Registers per kernel read from the CUBIN that NVRTC builds (the image the backend loads):
//! the `EIATTR_REGCOUNT` attributes of the ELF's `.nv.info` section, keyed by the kernel's
//! symbol. Needs NVRTC only, no driver: CI checks with it that the kernels launched on the
//! reduction grid keep their blocks resident together (a kernel whose registers halve the
//! blocks per multiprocessor runs its grid in two waves; that cost GMRES 13% at 4M-17M rows
//! once, bench/log/ 2026-11-26).

use crate::error::{Error, Result};

/// `.nv.info` attribute format holding a sized value.
const EIFMT_SVAL: u8 = 4;
/// `.nv.info` attribute: registers of a function (value: symbol index, count).
const EIATTR_REGCOUNT: u8 = 0x2f;
/// ELF section type of the symbol table.
const SHT_SYMTAB: u32 = 2;

fn malformed(what: &str) -> Error {
    Error::KernelBuild {
        backend: "cuda".into(),
        log: format!("the CUBIN from NVRTC is not an ELF image this reader understands: {what}"),
    }
}

fn bytes<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N]> {
    data.get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| malformed("a field lies past the end"))
}

fn u16_at(data: &[u8], at: usize) -> Result<u16> {
    bytes::<2>(data, at).map(u16::from_le_bytes)
}

fn u32_at(data: &[u8], at: usize) -> Result<u32> {
    bytes::<4>(data, at).map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: usize) -> Result<usize> {
    bytes::<8>(data, at).map(|b| u64::from_le_bytes(b) as usize)
}

/// A NUL-terminated name at `at`.
fn name_at(data: &[u8], at: usize) -> Result<String> {
    let tail = data
        .get(at..)
        .ok_or_else(|| malformed("a name lies past the end"))?;
    let end = tail
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| malformed("an unterminated name"))?;
    Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
}

/// One ELF64 section header: (name offset, type, file offset, size, link).
struct Section {
    name: u32,
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
}

fn sections(elf: &[u8]) -> Result<Vec<Section>> {
    if elf.get(..5) != Some(b"\x7fELF\x02".as_slice()) {
        return Err(malformed("no ELF64 header"));
    }
    let shoff = u64_at(elf, 0x28)?;
    let entsize = usize::from(u16_at(elf, 0x3a)?);
    let count = usize::from(u16_at(elf, 0x3c)?);
    (0..count)
        .map(|i| {
            let h = shoff + i * entsize;
            Ok(Section {
                name: u32_at(elf, h)?,
                kind: u32_at(elf, h + 4)?,
                offset: u64_at(elf, h + 0x18)?,
                size: u64_at(elf, h + 0x20)?,
                link: u32_at(elf, h + 0x28)? as usize,
            })
        })
        .collect()
}

/// (kernel name, registers per thread) for every function of a CUBIN with a register count.
pub(crate) fn registers(elf: &[u8]) -> Result<Vec<(String, u32)>> {
    let secs = sections(elf)?;
    let shstr = secs
        .get(usize::from(u16_at(elf, 0x3e)?))
        .ok_or_else(|| malformed("no section name table"))?
        .offset;
    let symtab = secs
        .iter()
        .find(|s| s.kind == SHT_SYMTAB)
        .ok_or_else(|| malformed("no symbol table"))?;
    let strtab = secs
        .get(symtab.link)
        .ok_or_else(|| malformed("no symbol name table"))?
        .offset;
    let symbol = |index: usize| -> Result<String> {
        if (index + 1) * 24 > symtab.size {
            return Err(malformed("a symbol index past the table"));
        }
        name_at(
            elf,
            strtab + u32_at(elf, symtab.offset + 24 * index)? as usize,
        )
    };
    let mut out = Vec::new();
    for s in &secs {
        if name_at(elf, shstr + s.name as usize)? != ".nv.info" {
            continue;
        }
        let (mut at, end) = (s.offset, s.offset + s.size);
        while at + 4 <= end {
            let [format, attr] = bytes::<2>(elf, at)?;
            let value = usize::from(u16_at(elf, at + 2)?);
            at += 4;
            if format == EIFMT_SVAL {
                if attr == EIATTR_REGCOUNT && value >= 8 {
                    out.push((symbol(u32_at(elf, at)? as usize)?, u32_at(elf, at + 4)?));
                }
                at += value;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anything_but_an_elf_image_is_an_error_not_a_panic() {
        for bad in [&b""[..], b"\x7fELF", b"\x7fELF\x02\x01\x01", &[0xff; 64]] {
            assert!(matches!(registers(bad), Err(Error::KernelBuild { .. })));
        }
        // A header whose section table points past the end.
        let mut elf = vec![0u8; 64];
        elf[..5].copy_from_slice(b"\x7fELF\x02");
        elf[0x28..0x30].copy_from_slice(&1000u64.to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&2u16.to_le_bytes());
        assert!(matches!(registers(&elf), Err(Error::KernelBuild { .. })));
    }
}
