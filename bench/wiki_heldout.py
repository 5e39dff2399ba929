"""Held-out questions over the Obsidian Help vault, for the room brief's wiki retrieval.

Each question is phrased the way a reader would ask it (a task, a problem, a symptom, a
short keyword query, some in non-native English) and maps to the single vault page that
best answers it (path relative to the vault root). The set was written from the vault
alone, before any tuning of the ranking, without looking at the ranking code or the tuning
question set. Never read this file while tuning the ranking: the evaluation reports these
questions only as totals.

NO_SHARED_WORDS lists the questions that use none of their answer page's title words.
"""

from __future__ import annotations

HELDOUT: dict[str, str] = {
    (
        "Every image I paste into a note ends up loose at the top level of my vault. Can they go "
        "into a subfolder next to the note instead?"
    ): "Editing and formatting/Attachments.md",
    (
        "I deleted a big chunk of text by accident an hour ago and I don't pay for any sync "
        "service. Can I still get the old text back?"
    ): "Plugins/File recovery.md",
    (
        "A teammate overwrote a paragraph in our shared synced vault last week. How do I roll the "
        "note back to what it was before?"
    ): "Obsidian Sync/Version history.md",
    (
        "While editing, my text stretches across my whole ultrawide monitor and is tiring to read. "
        "Can I cap how wide the lines get?"
    ): "User interface/Settings.md",
    (
        "Does the word counter handle Chinese text that has no spaces between words?"
    ): "Plugins/Word count.md",
    (
        "How can I give a note a nickname, so typing the short form when linking still finds it?"
    ): "Linking notes and files/Aliases.md",
    (
        "I want a picture of dots and lines showing how all my pages connect to each other."
    ): "Plugins/Graph view.md",
    "Which other pages point to the note I'm currently reading?": "Plugins/Backlinks.md",
    (
        "In the note I'm editing, how do I find words that match other notes' titles but that I "
        "never turned into links?"
    ): "Plugins/Outgoing links.md",
    (
        "How do I write a private remark in a note that shows while editing but disappears in "
        "reading view?"
    ): "Editing and formatting/Basic formatting syntax.md",
    (
        "There is no Markdown for underlined text. How can I underline a word anyway?"
    ): "Editing and formatting/HTML content.md",
    (
        "Show only page 5 of a PDF inside my note instead of the whole document"
    ): "Linking notes and files/Embed files.md",
    (
        "How do I link to one specific paragraph in another note rather than the whole note?"
    ): "Linking notes and files/Internal links.md",
    (
        "How I can change the menus of the app to my mother tongue?"
    ): "User interface/Language settings.md",
    (
        "I speak Ukrainian fluently and want to help translate the app interface. Where do I "
        "submit my work?"
    ): "Contributing to Obsidian/Translations.md",
    (
        "On a Mac, which system folder holds the app-wide preferences that aren't tied to a single "
        "vault?"
    ): "Files and folders/How Obsidian stores data.md",
    (
        "I can't see the hidden .obsidian directory on my Android phone. How do I get to it?"
    ): "Files and folders/Configuration folder.md",
    (
        "My notes keeps disappear again right after I restore them from sync, on Windows computer. "
        "Why is this happening?"
    ): "Obsidian Sync/Troubleshoot Obsidian Sync.md",
    (
        "How do I stop one heavy folder of videos from being uploaded to my remote vault?"
    ): "Obsidian Sync/Sync settings and selective syncing.md",
    (
        "What happens if I forget the password that encrypts my remote vault?"
    ): "Obsidian Sync/Security and privacy.md",
    (
        "Can I put a password on my published website so only my students can open it?"
    ): "Obsidian Publish/Security and privacy.md",
    "cloudflare cname publish own domain": "Obsidian Publish/Custom domains.md",
    (
        "When someone posts my published page on Mastodon, the card shows a random image. Can I "
        "choose which picture it uses?"
    ): "Obsidian Publish/Social media link previews.md",
    (
        "My dataview tables are showing in the app but not on the published website, why?"
    ): "Obsidian Publish/Publish limitations.md",
    (
        "How can I change the part after publish.obsidian.md/ in my address without buying a "
        "domain?"
    ): "Obsidian Publish/Manage sites.md",
    (
        "I'm a teacher at a high school. Is there a cheaper price for Sync?"
    ): "Licenses and payment/Education and non-profit discount.md",
    (
        "I bought Sync yesterday by accident. Can I get my money back?"
    ): "Licenses and payment/Refund policy.md",
    (
        "How do I download a bill for my Sync purchase and change the company address printed on "
        "it?"
    ): "Licenses and payment/Introduction to licenses and payment.md",
    (
        "Our company has a VAT ID. How do we stop being charged tax on future purchases?"
    ): "Licenses and payment/Sales tax.md",
    (
        "Is it okay to use the app at my job for free, or must my employer buy something?"
    ): "Teams/Commercial license.md",
    (
        "How do I get beta builds before everyone else, and how do I go back to the normal release "
        "afterwards?"
    ): "Obsidian/Early access versions.md",
    (
        "I got a new phone and the app that gave me six-digit login codes is gone. Now I'm locked "
        "out of my account."
    ): "Obsidian/2-factor authentication.md",
    (
        "A plugin says my installer is too old, but the app says it is up to date. What do I do?"
    ): "Getting started/Update Obsidian.md",
    (
        "Is it fine to keep my vault in iCloud Drive so my iPhone and Mac both open it? How do I "
        "set that up?"
    ): "Getting started/Sync your notes across devices.md",
    (
        "I just bought Obsidian Sync but my vault still lives in OneDrive. Where should I move it "
        "to avoid conflicts?"
    ): "Obsidian Sync/Switch to Obsidian Sync.md",
    (
        "It say my vault size is over the limit and sync is stopped, what I should do?"
    ): "Obsidian Sync/Plans and storage limits.md",
    (
        "On a Raspberry Pi with no screen, how do I keep my vault syncing continuously from the "
        "terminal?"
    ): "Obsidian Sync/Headless Sync.md",
    (
        "Is there a command-line tool that talks to the running desktop app, so I can search my "
        "vault from my terminal?"
    ): "Extending Obsidian/Obsidian CLI.md",
    (
        "What kind of link can I put in my task manager that jumps straight to a particular note "
        "in my vault?"
    ): "Extending Obsidian/Obsidian URI.md",
    (
        "Is dangerous to install plugins made by other people? They can read my files?"
    ): "Extending Obsidian/Plugin security.md",
    "enex import": "Import notes/Import from Evernote.md",
    (
        "Turn each row of my Excel spreadsheet into a separate note"
    ): "Import notes/Import CSV files.md",
    (
        "After moving over from Roam, my highlights written like ^^this^^ show up as raw symbols. "
        "How do I fix every note at once?"
    ): "Plugins/Format converter.md",
    (
        "With the browser extension, how can I mark passages in an article and save only those to "
        "my vault?"
    ): "Obsidian Web Clipper/Highlighter.md",
    "ollama local model web clipper summary": "Obsidian Web Clipper/Interpreter.md",
    (
        "Can the web clipper automatically pick a different template when I'm on a recipe site?"
    ): "Obsidian Web Clipper/Templates.md",
    (
        "Can I open external pages in a tab inside the app instead of jumping to my browser?"
    ): "Plugins/Web viewer.md",
    (
        "The browser extension has a clean reading mode for cluttered articles. How do I turn it "
        "on and change the font?"
    ): "Obsidian Web Clipper/Reader.md",
    (
        "I want a gallery of my movie notes with a poster picture on each tile"
    ): "Bases/Layouts/Cards view.md",
    (
        "Show my travel notes as pins on a world map using latitude and longitude from their "
        "properties"
    ): "Bases/Layouts/Map view.md",
    (
        "In a base, how do I add a calculated column that says Overdue once the due date has "
        "passed?"
    ): "Bases/Formulas.md",
    (
        "Is there an infinite whiteboard where I can drop notes and draw arrows between them?"
    ): "Plugins/Canvas.md",
    (
        "When I insert my meeting template, can it fill in today's date in DD.MM.YYYY format "
        "automatically?"
    ): "Plugins/Templates.md",
    (
        "Can I peek at a linked note's content by hovering the mouse over the link?"
    ): "Plugins/Page preview.md",
    (
        "Save my arrangement of open panes and sidebars as a writing setup and switch back to it "
        "later"
    ): "Plugins/Workspaces.md",
    "How do I see two different notes next to each other on screen?": "User interface/Tabs.md",
    (
        "If I uninstall the app from my Samsung phone, will my notes be delete too?"
    ): "Obsidian/Obsidian for Android.md",
    (
        "On iPhone, how do I send an article from Safari into my inbox note using the Share button?"
    ): "Obsidian/Obsidian for iOS and iPadOS.md",
    (
        "My keyboard is German and the shortcut shown in settings don't match the keys. It still "
        "work?"
    ): "User interface/Hotkeys.md",
    "default shortcut delete current line": "Editing and formatting/Editing shortcuts.md",
    (
        "How do I make a colored warning box in my note that readers can expand and collapse?"
    ): "Editing and formatting/Callouts.md",
    "mermaid flowchart in a note": "Editing and formatting/Advanced formatting syntax.md",
    (
        "I'd like the asterisks and hash signs to stay visible while I type, instead of being "
        "hidden"
    ): "Editing and formatting/Views and editing mode.md",
    "rename a property everywhere in my vault at once": "Plugins/Properties view.md",
    (
        "symlink a folder from another drive into my vault"
    ): "Files and folders/Symbolic links and junctions.md",
    (
        "How do I rename my vault, and will the folder on disk get renamed too?"
    ): "Files and folders/Manage vaults.md",
}

NO_SHARED_WORDS: frozenset[str] = frozenset(
    {
        (
            "Every image I paste into a note ends up loose at the top level of my vault. Can they "
            "go into a subfolder next to the note instead?"
        ),
        (
            "I deleted a big chunk of text by accident an hour ago and I don't pay for any sync "
            "service. Can I still get the old text back?"
        ),
        (
            "A teammate overwrote a paragraph in our shared synced vault last week. How do I roll "
            "the note back to what it was before?"
        ),
        (
            "While editing, my text stretches across my whole ultrawide monitor and is tiring to "
            "read. Can I cap how wide the lines get?"
        ),
        "How can I give a note a nickname, so typing the short form when linking still finds it?",
        "I want a picture of dots and lines showing how all my pages connect to each other.",
        "Which other pages point to the note I'm currently reading?",
        (
            "How do I write a private remark in a note that shows while editing but disappears in "
            "reading view?"
        ),
        "There is no Markdown for underlined text. How can I underline a word anyway?",
        "Show only page 5 of a PDF inside my note instead of the whole document",
        "How I can change the menus of the app to my mother tongue?",
        (
            "On a Mac, which system folder holds the app-wide preferences that aren't tied to a "
            "single vault?"
        ),
        "I can't see the hidden .obsidian directory on my Android phone. How do I get to it?",
        "How do I stop one heavy folder of videos from being uploaded to my remote vault?",
        "What happens if I forget the password that encrypts my remote vault?",
        "Can I put a password on my published website so only my students can open it?",
        (
            "When someone posts my published page on Mastodon, the card shows a random image. Can "
            "I choose which picture it uses?"
        ),
        (
            "How can I change the part after publish.obsidian.md/ in my address without buying a "
            "domain?"
        ),
        "I'm a teacher at a high school. Is there a cheaper price for Sync?",
        "I bought Sync yesterday by accident. Can I get my money back?",
        (
            "How do I download a bill for my Sync purchase and change the company address printed "
            "on it?"
        ),
        "Is it okay to use the app at my job for free, or must my employer buy something?",
        (
            "How do I get beta builds before everyone else, and how do I go back to the normal "
            "release afterwards?"
        ),
        (
            "I got a new phone and the app that gave me six-digit login codes is gone. Now I'm "
            "locked out of my account."
        ),
        "A plugin says my installer is too old, but the app says it is up to date. What do I do?",
        (
            "Is it fine to keep my vault in iCloud Drive so my iPhone and Mac both open it? How do "
            "I set that up?"
        ),
        (
            "Is there a command-line tool that talks to the running desktop app, so I can search "
            "my vault from my terminal?"
        ),
        (
            "What kind of link can I put in my task manager that jumps straight to a particular "
            "note in my vault?"
        ),
        "Turn each row of my Excel spreadsheet into a separate note",
        (
            "After moving over from Roam, my highlights written like ^^this^^ show up as raw "
            "symbols. How do I fix every note at once?"
        ),
        (
            "With the browser extension, how can I mark passages in an article and save only those "
            "to my vault?"
        ),
        "ollama local model web clipper summary",
        "Can I open external pages in a tab inside the app instead of jumping to my browser?",
        "I want a gallery of my movie notes with a poster picture on each tile",
        (
            "In a base, how do I add a calculated column that says Overdue once the due date has "
            "passed?"
        ),
        "Is there an infinite whiteboard where I can drop notes and draw arrows between them?",
        "Can I peek at a linked note's content by hovering the mouse over the link?",
        (
            "Save my arrangement of open panes and sidebars as a writing setup and switch back to "
            "it later"
        ),
        "How do I see two different notes next to each other on screen?",
        "If I uninstall the app from my Samsung phone, will my notes be delete too?",
        (
            "On iPhone, how do I send an article from Safari into my inbox note using the Share "
            "button?"
        ),
        (
            "My keyboard is German and the shortcut shown in settings don't match the keys. It "
            "still work?"
        ),
        "How do I make a colored warning box in my note that readers can expand and collapse?",
        "mermaid flowchart in a note",
        (
            "I'd like the asterisks and hash signs to stay visible while I type, instead of being "
            "hidden"
        ),
    }
)
