//! Builds the C OpenMP peers with gcc -fopenmp.
fn main() {
    println!("cargo:rerun-if-changed=csrc/peers.c");
    cc::Build::new()
        .file("csrc/peers.c")
        .flag("-fopenmp")
        .opt_level(3)
        .compile("asat_peers_c");
    println!("cargo:rustc-link-lib=gomp");
}
