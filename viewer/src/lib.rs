//! The Fitness Report viewer: board, run record and replay.

use leptos::prelude::*;

/// The application shell. Its root element carries `id="fitness-app"` and
/// `data-ready="1"`, which only exist once the wasm has started and rendered.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <main id="fitness-app" data-ready="1">
            <header class="masthead">
                <h1>"Fitness Report"</h1>
                <p class="thesis">
                    "A leaderboard you can trust must be able to say: this measurement was not valid."
                </p>
            </header>
            <p class="version">"viewer " {fitness_shared::VERSION}</p>
        </main>
    }
}
