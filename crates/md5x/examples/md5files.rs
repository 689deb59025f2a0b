//! Hash files and print md5sum-style lines: `<hex>  <name>` (`-` or nothing: stdin).
//!
//!     cargo run --release -p md5x --example md5files -- FILE...
//!
//! A stand-in until the `md5x` command lands; it streams each file through `md5x::Md5`.
use std::io::Read;
use std::process::ExitCode;

fn hash(reader: &mut dyn Read) -> std::io::Result<md5x::Digest> {
    let mut h = md5x::Md5::new();
    let mut buf = vec![0u8; 256 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(h.finalize()),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn main() -> ExitCode {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names.push("-".into());
    }
    let mut status = ExitCode::SUCCESS;
    for name in names {
        let result = if name == "-" {
            hash(&mut std::io::stdin().lock())
        } else {
            std::fs::File::open(&name).and_then(|mut f| hash(&mut f))
        };
        match result {
            Ok(d) => println!("{d}  {name}"),
            Err(e) => {
                eprintln!("md5files: {name}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
