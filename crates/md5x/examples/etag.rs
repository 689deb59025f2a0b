//! Print the S3 ETag of each file: `<etag>  <name>`.
//!
//!     cargo run --release -p md5x --example etag -- [--part-size N] [--threshold N] FILE...
//!
//! Sizes are in bytes (defaults: 8 MiB each, as the AWS CLI). The S3 tests in
//! tests/s3/ compare this against the ETags a real S3 API returns.
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut part = 8u64 << 20;
    let mut threshold = 8u64 << 20;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let target = match a.as_str() {
            "--part-size" => &mut part,
            "--threshold" => &mut threshold,
            _ => {
                files.push(a);
                continue;
            }
        };
        match args.next().and_then(|v| v.parse().ok()) {
            Some(v) => *target = v,
            None => {
                eprintln!("etag: {a} needs a size in bytes");
                return ExitCode::from(2);
            }
        }
    }
    let mut status = ExitCode::SUCCESS;
    for f in files {
        match md5x::chains::etag_file(&f, part, threshold, 0) {
            Ok(tag) => println!("{tag}  {f}"),
            Err(e) => {
                eprintln!("etag: {f}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
