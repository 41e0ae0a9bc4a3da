"""Opens an MCP session on the host over Streamable HTTP with the official
Python SDK, lists the tools, and closes it the way every client exit does.

Usage: close_session.py URL TOKEN. Prints one line per HTTP exchange
(`METHOD STATUS`) and `tools N`; the SDK's own warnings go to stderr, which
the Rust test reads.
"""

import asyncio
import logging
import sys

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str) -> None:
    async def show(response: httpx2.Response) -> None:
        print(f"{response.request.method} {response.status_code}", flush=True)

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30.0),
        event_hooks={"response": [show]},
    )
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                print(f"tools {len(tools.tools)}", flush=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
