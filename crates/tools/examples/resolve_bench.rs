//! Times path resolution of the file tools (target: ≤ 10 µs) and whole assessments.
//!
//! `cargo run --release -p cordon-tools --example resolve_bench` prints the median time per
//! call of each step, over batches of calls.

use std::hint::black_box;
use std::os::fd::AsFd;
use std::time::Instant;

use cordon_policy::Policy;
use cordon_tools::files::resolve::INSPECT;
use cordon_tools::files::{FileOp, FileTools, Limits};
use cordon_tools::tool::Tool;
use serde_json::json;

const BATCHES: usize = 101;
const PER_BATCH: usize = 2000;

/// Median over batches of the mean time per call, in microseconds.
fn median_us(mut f: impl FnMut()) -> f64 {
    for _ in 0..PER_BATCH {
        f(); // warm up
    }
    let mut per_call: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..PER_BATCH {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / PER_BATCH as f64
        })
        .collect();
    per_call.sort_by(|a, b| a.partial_cmp(b).unwrap());
    per_call[BATCHES / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(base.join("ws/src/module/inner")).unwrap();
    std::fs::write(
        base.join("ws/src/module/inner/file.rs"),
        "fn main() {}\n".repeat(8),
    )
    .unwrap();
    std::os::unix::fs::symlink("src/module", base.join("ws/m")).unwrap();
    let policy = Policy::parse(
        "version = 1\n[sandbox.paths.ws]\nroot = \"ws\"\nmode = \"rw\"\n",
        "p.toml",
        &base,
    )
    .unwrap();
    let tools = FileTools::new(&policy, Limits::default()).unwrap();
    let roots = tools.roots();
    let path = "ws/src/module/inner/file.rs";

    let open = median_us(|| {
        let t = roots.parse(black_box(path)).unwrap();
        black_box(roots.open(&t, INSPECT).unwrap());
    });
    let resolve = median_us(|| {
        let t = roots.parse(black_box(path)).unwrap();
        let fd = roots.open(&t, INSPECT).unwrap();
        black_box(rustix::fs::fstat(&fd).unwrap());
        black_box(roots.locate(fd.as_fd()).unwrap());
    });
    let via_symlink = median_us(|| {
        let t = roots
            .parse(black_box("ws/m/inner/../inner/file.rs"))
            .unwrap();
        let fd = roots.open(&t, INSPECT).unwrap();
        black_box(rustix::fs::fstat(&fd).unwrap());
        black_box(roots.locate(fd.as_fd()).unwrap());
    });
    let read = tools.tool(FileOp::Read);
    let args = json!({ "path": path });
    let read_assess = median_us(|| {
        black_box(read.assess(&args).unwrap());
    });
    let write = tools.tool(FileOp::Write);
    let wargs = json!({ "path": "ws/src/module/new.rs", "content": "fn x() {}\n" });
    let write_assess = median_us(|| {
        black_box(write.assess(&wargs).unwrap());
    });

    println!("median per call over {BATCHES} batches of {PER_BATCH}:");
    println!("  parse + openat2(RESOLVE_BENEATH)                 {open:6.2} µs");
    println!("  path resolution (+ fstat + /proc fd readback)    {resolve:6.2} µs");
    println!("  path resolution through a symlink and `..`       {via_symlink:6.2} µs");
    println!("  read_file assessment (104-byte file, preview)    {read_assess:6.2} µs");
    println!("  write_file assessment (new file, preview)        {write_assess:6.2} µs");
}
