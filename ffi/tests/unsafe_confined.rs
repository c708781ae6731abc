//! `unsafe` is confined to `src/raw.rs`. The other modules of the C API
//! allow the `unsafe_code` lint only because it counts `#[no_mangle]`;
//! this test holds them to holding no unsafe code besides that.

use std::path::Path;

#[test]
fn only_raw_rs_holds_unsafe_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = std::fs::read_dir(&src).expect("src/ reads").map(|e| e.expect("an entry").path()).collect();
    files.sort();
    let mut checked = 0;
    for path in files.iter().filter(|p| p.extension().is_some_and(|x| x == "rs")) {
        let name = path.file_name().and_then(|n| n.to_str()).expect("a file name");
        if name == "raw.rs" {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("the file reads");
        let exports = text.contains("#[no_mangle]");
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") || !code.contains("unsafe") {
                continue;
            }
            let allowance = code.starts_with("#![expect(unsafe_code, reason = \"the functions here are exported to C unmangled");
            assert!(allowance && exports, "src/{name}:{}: unsafe code outside src/raw.rs: `{code}`", i + 1);
        }
        checked += 1;
    }
    assert!(checked >= 10, "the modules of the crate were read ({checked})");
}
