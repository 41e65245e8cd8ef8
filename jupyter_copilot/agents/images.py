"""Plots and images of an attached cell, for agents that take images (docs/conversations.md,
"Plots and images").

With the ``cell_outputs`` reference granted, the PNG and JPEG outputs of the cell a person
attaches go to the agent with the message: as ACP image content blocks to an agent that
announced ``promptCapabilities.image``, resized so that the longest side is at most
``CopilotApp.agent_image_max_pixels``; as one text line each (type, size, dimensions and the
output's own alt text) to any other agent. Image data never travels inside a text block.

:func:`fit_image` and :func:`image_blocks` are pure; Pillow (the ``images`` extra) decodes
and resizes. Without Pillow, or for an image that does not decode, the agent gets the text
line with a note saying why the image itself was left out.
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings
from dataclasses import dataclass
from typing import Any

from acp.schema import ImageContentBlock, TextContentBlock

#: The MIME types that go to agents as images; other outputs keep their text digests.
IMAGE_MIMES = ("image/png", "image/jpeg")
#: The default of ``CopilotApp.agent_image_max_pixels``: the longest side, in pixels.
DEFAULT_MAX_PIXELS = 1024
#: Images with more pixels than this are not decoded at all (a decompression bomb).
MAX_DECODED_PIXELS = 64_000_000
#: The most base64 characters a page sends for one cell's images (the bridge's messages stay
#: well under tornado's 10 MiB); what is past it is described, not sent.
MAX_PAGE_IMAGE_CHARS = 6_000_000
#: The most images of one cell that go to an agent; the rest are described.
MAX_IMAGES = 8
#: How much of an output's alt text (its ``text/plain``) a description quotes.
ALT_CHARS = 200


class ImageProblem(Exception):
    """An image that cannot be sent; the message says why, in plain words."""


@dataclass(frozen=True)
class Fitted:
    """An image as it goes to the agent, and the size it had in the notebook."""

    data: bytes
    mime: str
    width: int
    height: int
    original_width: int
    original_height: int


def fit_image(data: bytes, mime: str, max_pixels: int) -> Fitted:
    """The image with its longest side at most ``max_pixels``, in its own format.

    An image that already fits is sent as it is (its bytes unchanged). Raises
    :class:`ImageProblem` when Pillow is missing, the data is not an image of the type the
    output claims, or the image has more than :data:`MAX_DECODED_PIXELS` pixels.
    """
    try:
        from PIL import Image
    except ImportError:
        raise ImageProblem(
            "images need Pillow on the server (pip install 'jupyterlab-agent-review[images]')"
        ) from None
    with warnings.catch_warnings():
        # Pillow warns about very large images as it opens them; this function refuses those
        # above MAX_DECODED_PIXELS itself, before anything is decoded.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        return _fit(data, mime, max_pixels)


def _fit(data: bytes, mime: str, max_pixels: int) -> Fitted:
    """:func:`fit_image` once Pillow is known to be there."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as checked:
            # Checks the file's structure and checksums; a cut or damaged PNG may otherwise
            # decode to a partly blank picture without a word.
            checked.verify()
        with Image.open(io.BytesIO(data)) as image:
            fmt = {"PNG": "image/png", "JPEG": "image/jpeg"}.get(image.format or "")
            if fmt != mime:
                raise ImageProblem(f"the data is not a {mime.split('/')[1].upper()} image")
            width, height = image.size
            if width < 1 or height < 1 or width * height > MAX_DECODED_PIXELS:
                raise ImageProblem(f"the image is too large to decode ({width}×{height})")
            if max(width, height) <= max_pixels:
                image.load()
                return Fitted(data, mime, width, height, width, height)
            if mime == "image/jpeg":
                # Decode at a fraction of the size when the format allows: far less memory.
                image.draft("RGB", (max_pixels, max_pixels))
            image.thumbnail((max_pixels, max_pixels), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            if mime == "image/jpeg":
                image.convert("RGB").save(out, "JPEG", quality=85)
            else:
                image.save(out, "PNG", optimize=True)
            return Fitted(out.getvalue(), mime, image.width, image.height, width, height)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise ImageProblem("the data is not a readable image") from e
    except Image.DecompressionBombError as e:
        raise ImageProblem("the image is too large to decode") from e


def image_size(data: bytes) -> tuple[int, int] | None:
    """An image's width and height from its header (nothing is decoded), if Pillow reads it."""
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except Exception:  # noqa: BLE001 - any failure means "unknown", described without size
        return None


def describe(
    item: dict[str, Any], index: int, size: tuple[int, int] | None, why: str | None
) -> str:
    """One image as a text line: its type, size, dimensions and alt text, and why it was
    left out when it was."""
    nbytes = item.get("bytes")
    parts = [str(item.get("mime") or "image")]
    if isinstance(nbytes, int):
        parts.append(_size(nbytes))
    if size is not None:
        parts.append(f"{size[0]}×{size[1]} px")
    alt = " ".join(str(item.get("alt") or "").split())[:ALT_CHARS]
    line = f"Image {index + 1} of the attached cell's outputs ({', '.join(parts)})"
    if alt:
        line += f', alt text "{alt}"'
    if why:
        line += f"; not sent: {why}"
    return line + "."


def image_blocks(
    items: list[dict[str, Any]], accepts_images: bool, max_pixels: int
) -> list[ImageContentBlock | TextContentBlock]:
    """The blocks that follow the attached cell: an image block for each image an
    image-capable agent may see, and one text block describing the others (or every image,
    for an agent that takes none). Empty when the cell has no images."""
    blocks: list[ImageContentBlock | TextContentBlock] = []
    lines: list[str] = []
    for index, item in enumerate(items):
        raw, why = _decoded(item)
        if raw is not None:
            item = {**item, "bytes": len(raw)}
        if not accepts_images or raw is None:
            size = image_size(raw) if raw is not None else None
            lines.append(describe(item, index, size, why if accepts_images else None))
            continue
        if index >= MAX_IMAGES:
            why = f"at most {MAX_IMAGES} images of one cell are sent"
            lines.append(describe(item, index, image_size(raw), why))
            continue
        try:
            fitted = fit_image(raw, str(item["mime"]), max_pixels)
        except ImageProblem as e:
            lines.append(describe(item, index, None, str(e)))
            continue
        blocks.append(
            ImageContentBlock(
                type="image",
                mime_type=fitted.mime,
                data=base64.b64encode(fitted.data).decode("ascii"),
                field_meta={
                    "width": fitted.width,
                    "height": fitted.height,
                    "originalWidth": fitted.original_width,
                    "originalHeight": fitted.original_height,
                },
            )
        )
    if lines:
        if not accepts_images:
            lines.append("This agent does not take images, so only these descriptions are sent.")
        blocks.append(TextContentBlock(type="text", text="\n".join(lines)))
    return blocks


def _decoded(item: dict[str, Any]) -> tuple[bytes | None, str | None]:
    """The image's bytes as the page sent them, or why there are none."""
    data = item.get("data")
    if item.get("mime") not in IMAGE_MIMES:
        return None, "only PNG and JPEG images are sent"
    if not isinstance(data, str):
        return None, "it is larger than the page sends"
    try:
        return base64.b64decode("".join(data.split()), validate=True), None
    except (binascii.Error, ValueError):
        return None, "the data is not base64"


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.0f} KB"
