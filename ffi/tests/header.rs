//! The committed header `include/murk.h` is what cbindgen writes from the
//! crate now: a change to the C API that was not regenerated fails here.

use std::path::Path;

#[test]
fn header_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml reads");
    let bindings = cbindgen::Builder::new().with_crate(crate_dir).with_config(config).generate().expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/murk.h");
    if std::env::var_os("MURK_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("include/murk.h is writable");
        println!("wrote {}", path.display());
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| committed.lines().count().min(generated.lines().count()) + 1, |i| i + 1);
        panic!(
            "ffi/include/murk.h is stale (first difference at line {line}); regenerate it with\n    MURK_BLESS=1 cargo test -p murk-ffi --test header\nand commit it"
        );
    }
}
