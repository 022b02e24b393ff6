"""The bot the dev tests talk to (its file is also copied as ``bot.py`` for ``svc dev`` runs).

A text gets reply buttons, a tap gets the button's title, ``order`` holds a conversation
(``wait_for_reply``), ``think`` shows "typing..." (``ctx.typing()``) until the user's
next message is answered, ``fail`` fails the run, an uploaded image or document is
downloaded (``ctx.download_media``) and described by its size and SHA-256, and
``show <kind>`` sends one message of each kind the page draws.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from svc import graph
from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate

bot = DefaultFacade()

Builder = Callable[[str, str], dict[str, Any]]
SHOW: dict[str, Builder] = {
    "text": lambda to, mid: graph.build_text_message(
        to=to, text="Plain *bold* _italic_ ~struck~ ```mono```"
    ),
    "list": lambda to, mid: graph.build_interactive_list_message(
        to=to,
        body_text="Pick a slot",
        button_text="Slots",
        sections=[{"title": "Tuesday", "rows": [
            {"id": "slot-0930", "title": "09:30", "description": "Tuesday morning"},
            {"id": "slot-1400", "title": "14:00"},
        ]}],
    ),
    "cta": lambda to, mid: graph.build_interactive_cta_url_message(
        to=to, body_text="Read the menu", display_text="Open menu", url="https://example.com/menu"
    ),
    "image": lambda to, mid: graph.build_image_message(
        to=to, link="https://example.com/cat.jpg", caption="A cat picture"
    ),
    "document": lambda to, mid: graph.build_document_message(
        to=to, media_id="1013859600285441", filename="invoice.pdf"
    ),
    "location": lambda to, mid: graph.build_location_message(
        to=to, latitude=37.4833, longitude=-122.1489, name="Main office", address="1 Hacker Way"
    ),
    "contacts": lambda to, mid: graph.build_contacts_message(
        to=to,
        contacts=[{"name": {"formatted_name": "Barbara Johnson", "first_name": "Barbara"},
                   "phones": [{"phone": "+1 940 555 1234", "type": "CELL"}]}],
    ),
    "template": lambda to, mid: graph.build_template_message(
        to=to,
        name="order_update",
        language_code="en_US",
        components=[
            {"type": "body", "parameters": [{"type": "text", "text": "Order 42 shipped"}]},
            {"type": "button", "sub_type": "quick_reply", "index": "0",
             "parameters": [{"type": "payload", "payload": "TRACK"}]},
        ],
    ),
    "flow": lambda to, mid: graph.build_interactive_flow_message(
        to=to, body_text="Rate us", flow_cta="Give a rating", flow_id="1234567890",
        flow_token="rating-7", screen="RATE",
    ),
    "signup": lambda to, mid: graph.build_interactive_flow_message(
        to=to, body_text="Sign up for the club", flow_cta="Sign up", flow_name="signup",
        flow_token="signup-1", screen="SIGN_UP",
    ),
    "receipt": lambda to, mid: graph.build_template_message(
        to=to,
        name="order_receipt",
        language_code="en_US",
        components=[
            {"type": "header", "parameters": [{"type": "text", "text": "42"}]},
            {"type": "body", "parameters": [
                {"type": "text", "text": "Kerry"}, {"type": "text", "text": "2 teas"},
            ]},
            {"type": "button", "sub_type": "quick_reply", "index": "0",
             "parameters": [{"type": "payload", "payload": "RECEIPT_OK"}]},
            {"type": "button", "sub_type": "url", "index": "2",
             "parameters": [{"type": "text", "text": "42"}]},
        ],
    ),
    "reaction": lambda to, mid: graph.build_reaction_message(to=to, message_id=mid, emoji="🎉"),
    "read": lambda to, mid: graph.build_read_receipt(message_id=mid, typing_indicator=True),
}


@bot.on("message", context=True)
async def answer(ctx: HandlerContext) -> None:
    update = ctx.update
    if not isinstance(update, MessageUpdate) or update.user is None or not update.user.key:
        return
    to = update.user.key
    content: Any = update.content
    if update.type == "interactive" and content.reply_type == "nfm_reply":
        await ctx.reply_text(f"Flow answered: {content.flow_response}")
    elif update.type == "interactive":
        await ctx.reply_text(f"You chose {content.title}")
    elif update.type == "button":
        await ctx.reply_text(f"Quick reply {content.payload}")
    elif update.type in ("image", "document") and content.media_id is not None:
        # Fetched as in production: GET /{media-id}, then its URL, checked by its SHA-256.
        got = await ctx.download_media(content.media_id)
        digest = hashlib.sha256(got.content).hexdigest()
        await ctx.reply_text(
            f"Got {content.filename or update.type}: {len(got.content)} bytes, "
            f"{got.content_type}, sha256 {digest}"
        )
    elif update.type == "reaction":
        await ctx.reply_text(f"Thanks for the {content.emoji}")
    elif update.type != "text" or update.text is None:
        await ctx.reply_text(f"Got a {update.type}")
    elif update.text == "order":
        await ctx.reply_text("Your name?")
        name = await ctx.wait_for_reply(timeout=60)
        await ctx.reply_text(f"Thanks, {name.text}: order placed.")
    elif update.text == "think":
        async with ctx.typing():  # drawn as "typing..." until the reply
            await ctx.wait_for_reply(timeout=60)
            await ctx.reply_text("Done thinking")
    elif update.text == "fail":
        raise RuntimeError("the bot failed on purpose")
    elif update.text.startswith("show "):
        await ctx.send(SHOW[update.text.removeprefix("show ")](to, update.message_id))
    else:
        await ctx.send(
            graph.build_interactive_buttons_message(
                to=to,
                body_text=f"You said *{update.text}*. Tea or coffee?",
                buttons=[{"id": "tea", "title": "Tea"}, {"id": "coffee", "title": "Coffee"}],
            )
        )
