//! Entry point of the viewer's wasm: mount the app on the page body.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(fitness_viewer::App);
}
