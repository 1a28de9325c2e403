//! The layering of `src/backend/`: no module imports, directly or through others, a module
//! that imports it back (DESIGN.md, "How the code is laid out"). The floor (buffers, partials,
//! matrices, the kernel families' traits, the tuning) names no backend; the backends build on
//! it; `AnyBackend` and the run-time choice sit above them.
//!
//! The check reads the sources: every `use` and every path that starts at `crate`, `super`,
//! `self` or a child module is resolved to the file that defines the item it names (through the
//! re-exports of `mod.rs` files, which are not dependencies themselves), test modules left out.
//! Then a depth-first search over `src/backend/` reports each circle with the paths that make
//! it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// A module as its path below `src/` (`["backend", "opencl", "raw"]`).
type Module = Vec<String>;

/// A `use` declaration: whether it is `pub` (any visibility), and the paths it imports.
type UseDeclaration = (bool, Vec<Vec<String>>);

struct Source {
    /// The source without comments, string and character literals, and test modules.
    text: String,
    /// `mod.rs` or `lib.rs`: its children are named relative to it.
    is_dir_module: bool,
}

fn collect(dir: &Path, root: &Path, out: &mut BTreeMap<Module, Source>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(&path, root, out);
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let rel = path.strip_prefix(root).expect("below src/");
        let mut module: Module = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.first().map(String::as_str) == Some("bin") {
            continue;
        }
        let last = module.last().cloned().unwrap_or_default();
        let is_dir_module = matches!(last.as_str(), "mod" | "lib" | "main");
        if is_dir_module {
            module.pop();
        }
        let raw = std::fs::read_to_string(&path).expect("a source file");
        out.insert(
            module,
            Source {
                text: without_tests(&code_only(&raw)),
                is_dir_module,
            },
        );
    }
}

/// `src` with comments removed and string and character literals emptied.
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            'r' if (c.get(i + 1) == Some(&'"') || c.get(i + 1) == Some(&'#'))
                && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    i += if c[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
                if c.get(i + 1) == Some(&'\\') {
                    i += 2;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if c.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    out.push('\'');
                    i += 1;
                }
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// The source up to its first test module.
fn without_tests(src: &str) -> String {
    let cut = ["#[cfg(test)]", "#[cfg(all(test"]
        .iter()
        .filter_map(|m| src.find(m))
        .min()
        .unwrap_or(src.len());
    src[..cut].to_string()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The names a source defines (types, traits, functions, constants, statics, macros).
fn definitions(text: &str) -> BTreeSet<String> {
    let words: Vec<&str> = text
        .split(|c: char| !(is_ident(c) || c == '!'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut names = BTreeSet::new();
    for pair in words.windows(2) {
        if matches!(
            pair[0],
            "struct" | "enum" | "trait" | "fn" | "type" | "const" | "static" | "union"
        ) || pair[0] == "macro_rules!"
        {
            names.insert(pair[1].trim_end_matches('!').to_string());
        }
    }
    names
}

/// The paths of a `use` tree (`a::{b, c::{d, e as f}}` is `a::b`, `a::c::d`, `a::c::e`).
fn expand_use(prefix: &[String], tree: &str) -> Vec<Vec<String>> {
    let mut parts = Vec::new();
    let (mut depth, mut current) = (0, String::new());
    for ch in tree.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(ch);
        }
    }
    parts.push(current);
    let mut out = Vec::new();
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let part = part.split(" as ").next().unwrap_or(part).trim();
        if let Some(open) = part.find('{') {
            let close = part.rfind('}').unwrap_or(part.len());
            let mut p = prefix.to_vec();
            p.extend(segments(&part[..open]));
            out.extend(expand_use(&p, &part[open + 1..close]));
        } else {
            let mut p = prefix.to_vec();
            p.extend(segments(part));
            out.push(p);
        }
    }
    out
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The `use` declarations of a source: (is `pub`, the paths), and the source without them.
fn use_declarations(text: &str) -> (Vec<UseDeclaration>, String) {
    let mut uses = Vec::new();
    let mut rest = String::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    while let Some(found) = text[i..].find("use ") {
        let at = i + found;
        let starts_word = at == 0 || !is_ident(bytes[at - 1] as char);
        if !starts_word {
            rest.push_str(&text[i..at + 4]);
            i = at + 4;
            continue;
        }
        // The words before `use` on its line: `pub`, `pub(crate)`, ...
        let line = text[..at]
            .rsplit(['\n', ';', '{', '}'])
            .next()
            .unwrap_or("");
        let public = line.trim().starts_with("pub");
        let Some(end) = text[at..].find(';') else {
            break;
        };
        rest.push_str(&text[i..at]);
        uses.push((public, expand_use(&[], &text[at + 4..at + end])));
        i = at + end + 1;
    }
    rest.push_str(&text[i..]);
    (uses, rest)
}

/// The paths written in code: `crate::...`, `super::...`, `self::...` and, in a `mod.rs`,
/// `child::...`.
fn inline_paths(text: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let starts = is_ident(c[i]) && (i == 0 || !(is_ident(c[i - 1]) || c[i - 1] == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut path = Vec::new();
        loop {
            let k = j;
            while j < c.len() && is_ident(c[j]) {
                j += 1;
            }
            path.push(c[k..j].iter().collect::<String>());
            if c.get(j) == Some(&':')
                && c.get(j + 1) == Some(&':')
                && c.get(j + 2).is_some_and(|&x| is_ident(x))
            {
                j += 2;
            } else {
                break;
            }
        }
        let first = path[0].as_str();
        if path.len() > 1
            && (matches!(first, "crate" | "super" | "self") || children.contains(first))
        {
            out.push(path);
        }
        i = j.max(i + 1);
    }
    out
}

struct Crate {
    sources: BTreeMap<Module, Source>,
    defined: HashMap<String, BTreeSet<Module>>,
    /// (a `mod.rs` module, a name it re-exports) -> the absolute path re-exported.
    reexports: HashMap<(Module, String), Vec<String>>,
}

impl Crate {
    fn children(&self, m: &Module) -> BTreeSet<String> {
        self.sources
            .keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k[m.len()].clone())
            .collect()
    }

    /// `path` as written in `m`, made absolute (below `crate`); `None` for other crates.
    fn absolute(&self, m: &Module, is_dir_module: bool, path: &[String]) -> Option<Vec<String>> {
        let mut p: Vec<String> = match path.first().map(String::as_str) {
            Some("crate") => path[1..].to_vec(),
            Some("self") => m.iter().chain(&path[1..]).cloned().collect(),
            Some("super") => {
                let mut base = m.clone();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.into_iter().chain(rest.iter().cloned()).collect()
            }
            Some(first) if is_dir_module && self.children(m).contains(first) => {
                m.iter().chain(path).cloned().collect()
            }
            _ => return None,
        };
        p.retain(|s| s != "self");
        Some(p)
    }

    /// The module that defines what the absolute `path` names.
    fn target(&self, path: &[String]) -> Option<Module> {
        let mut path = path.to_vec();
        for _ in 0..16 {
            let k = (1..=path.len())
                .rev()
                .find(|&k| self.sources.contains_key(&path[..k]))?;
            let module = path[..k].to_vec();
            if k == path.len() || path[k] == "*" {
                return Some(module);
            }
            let name = &path[k];
            if let Some(next) = self.reexports.get(&(module.clone(), name.clone())) {
                path = next.clone();
                continue;
            }
            let defined = self.defined.get(name);
            if defined.is_some_and(|d| d.contains(&module)) {
                return Some(module);
            }
            return defined
                .and_then(|d| {
                    d.iter()
                        .filter(|x| x.starts_with(&module))
                        .min_by_key(|x| x.len())
                })
                .cloned()
                .or(Some(module));
        }
        None
    }
}

#[test]
fn the_backend_modules_import_in_one_direction() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = BTreeMap::new();
    collect(&root, &root, &mut sources);
    let mut krate = Crate {
        defined: HashMap::new(),
        reexports: HashMap::new(),
        sources,
    };
    for (m, s) in &krate.sources {
        for name in definitions(&s.text) {
            krate.defined.entry(name).or_default().insert(m.clone());
        }
    }
    let mut reexports = HashMap::new();
    for (m, s) in &krate.sources {
        if !s.is_dir_module {
            continue;
        }
        for (public, paths) in use_declarations(&s.text).0 {
            for p in paths.into_iter().filter(|_| public) {
                let first = p.first().map(String::as_str);
                let abs = if matches!(first, Some("crate" | "super" | "self")) {
                    krate.absolute(m, true, &p)
                } else {
                    Some(m.iter().chain(&p).cloned().collect())
                };
                if let (Some(abs), Some(name)) = (abs, p.last()) {
                    reexports.insert((m.clone(), name.clone()), abs);
                }
            }
        }
    }
    krate.reexports = reexports;

    // Edges between the modules of src/backend/, each with the paths that make it.
    let in_backend = |m: &Module| m.first().map(String::as_str) == Some("backend");
    let mut edges: BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>> = BTreeMap::new();
    for (m, s) in krate.sources.iter().filter(|(m, _)| in_backend(m)) {
        let (uses, code) = use_declarations(&s.text);
        let mut paths: Vec<Vec<String>> = uses
            .into_iter()
            // A directory module's `pub use` re-exports; it depends on nothing by it.
            .filter(|(public, _)| !(s.is_dir_module && *public))
            .flat_map(|(_, p)| p)
            .collect();
        let children = if s.is_dir_module {
            krate.children(m)
        } else {
            BTreeSet::new()
        };
        paths.extend(inline_paths(&code, &children));
        let out = edges.entry(m.clone()).or_default();
        for p in paths {
            let Some(abs) = krate.absolute(m, s.is_dir_module, &p) else {
                continue;
            };
            if let Some(t) = krate.target(&abs).filter(|t| t != m && in_backend(t)) {
                out.entry(t).or_default().insert(p.join("::"));
            }
        }
    }
    assert!(
        edges.len() > 50,
        "the check found only {} modules in src/backend/",
        edges.len()
    );

    // Every circle, found as a back edge of a depth-first search.
    let mut circles = Vec::new();
    let mut state: HashMap<Module, u8> = HashMap::new(); // 1: on the stack, 2: done
    let mut stack: Vec<Module> = Vec::new();
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeMap<Module, BTreeSet<String>>>,
        state: &mut HashMap<Module, u8>,
        stack: &mut Vec<Module>,
        circles: &mut Vec<String>,
    ) {
        state.insert(m.clone(), 1);
        stack.push(m.clone());
        for (t, why) in edges.get(m).into_iter().flatten() {
            match state.get(t) {
                Some(1) => {
                    let from = stack.iter().position(|x| x == t).unwrap_or(0);
                    let names: Vec<String> = stack[from..].iter().map(|x| x.join("/")).collect();
                    circles.push(format!(
                        "{} -> {} (by {})",
                        names.join(" -> "),
                        t.join("/"),
                        why.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                Some(_) => {}
                None => visit(t, edges, state, stack, circles),
            }
        }
        stack.pop();
        state.insert(m.clone(), 2);
    }
    for m in edges.keys() {
        if !state.contains_key(m) {
            visit(m, &edges, &mut state, &mut stack, &mut circles);
        }
    }
    assert!(
        circles.is_empty(),
        "import circles in src/backend/:\n{}",
        circles.join("\n")
    );
}
