"""Paraphrased questions over the Obsidian Help vault, each with the page that answers it.

Asked the way a user asks: in their own words, rarely with the page title's
words. ``bench/wiki_eval.py`` reports how many land in the brief's top 3 and
within B. Paths are relative to the vault root.
"""

from __future__ import annotations

QUESTIONS: dict[str, str] = {
    "sync between phone and desktop": "Getting started/Sync your notes across devices.md",
    "keep my notes the same on my laptop and my tablet": (
        "Getting started/Sync your notes across devices.md"
    ),
    "get back a note I deleted by accident without paying for anything": (
        "Plugins/File recovery.md"
    ),
    "see what a note looked like last week on the paid sync service": (
        "Obsidian Sync/Version history.md"
    ),
    "put a PDF inside my note so it shows in the page": "Linking notes and files/Embed files.md",
    "give a note a second name so links with the other name still find it": (
        "Linking notes and files/Aliases.md"
    ),
    "where do pasted images end up on disk": "Editing and formatting/Attachments.md",
    "show a coloured warning box in the middle of a note": "Editing and formatting/Callouts.md",
    "hide parts of a long note under its headings": "Editing and formatting/Folding.md",
    "type in several places at once": "Editing and formatting/Multiple cursors.md",
    "add structured fields like date and status at the top of a note": (
        "Editing and formatting/Properties.md"
    ),
    "bold italic and strikethrough text": "Editing and formatting/Basic formatting syntax.md",
    "draw a table or a diagram in markdown": "Editing and formatting/Advanced formatting syntax.md",
    "switch between the preview and the source while writing": (
        "Editing and formatting/Views and editing mode.md"
    ),
    "assign my own key combination to a command": "User interface/Hotkeys.md",
    "open a note in its own separate window": "User interface/Pop-out windows.md",
    "change the app to another language like German": "User interface/Language settings.md",
    "dark mode and font size": "User interface/Appearance.md",
    "put two notes side by side and scroll them together": "User interface/Tabs.md",
    "a picture of how all my notes connect to each other": "Plugins/Graph view.md",
    "see which notes point to the one I am reading": "Plugins/Backlinks.md",
    "a new note for every day with today's date": "Plugins/Daily notes.md",
    "reuse the same skeleton text when I create meeting notes": "Plugins/Templates.md",
    "jump to a note by typing part of its name": "Plugins/Quick switcher.md",
    "run any action by name from one box": "Plugins/Command palette.md",
    "save notes I use often so I find them fast": "Plugins/Bookmarks.md",
    "present my note as a slideshow": "Plugins/Slides.md",
    "merge two notes into one or split a note": "Plugins/Note composer.md",
    "how many words have I written": "Plugins/Word count.md",
    "an infinite whiteboard with cards and arrows": "Plugins/Canvas.md",
    "install add-ons that other people made": "Extending Obsidian/Community plugins.md",
    "change one small piece of the look with my own CSS": "Extending Obsidian/CSS snippets.md",
    "open a note from another app with a link": "Extending Obsidian/Obsidian URI.md",
    "bring my notes over from Evernote": "Import notes/Import from Evernote.md",
    "move my workspace from Notion": "Import notes/Import from Notion.md",
    "where are the app's settings files kept in the vault": (
        "Files and folders/Configuration folder.md"
    ),
    "which kinds of files can I open in the app": "Files and folders/Accepted file formats.md",
    "use my own web address for my published site": "Obsidian Publish/Custom domains.md",
    "make my public site show up better in Google": "Obsidian Publish/SEO.md",
    "count visitors on my published notes": "Obsidian Publish/Analytics.md",
    "get my money back after buying": "Licenses and payment/Refund policy.md",
    "cheaper price for students": "Licenses and payment/Education and non-profit discount.md",
    "do I need to pay to use it at work": "Teams/Commercial license.md",
    "how much space do I get on the sync plans": "Obsidian Sync/Plans and storage limits.md",
    "share a synced vault with a colleague": "Obsidian Sync/Collaborate on a shared vault.md",
    "stop some folders from syncing": "Obsidian Sync/Sync settings and selective syncing.md",
    "what does the little cloud icon at the bottom mean": (
        "Obsidian Sync/Status icon and messages.md"
    ),
    "make a copy of my notes in case my disk dies": (
        "Getting started/Back up your Obsidian files.md"
    ),
    "a table of my notes filtered by their properties, like a database": (
        "Bases/Introduction to Bases.md"
    ),
    "save an article from the browser into my vault": (
        "Obsidian Web Clipper/Introduction to Obsidian Web Clipper.md"
    ),
}
