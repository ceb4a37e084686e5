"""Every human-facing message of the archive's CLI, shell and MCP tool texts, in each language.

One declaration per message, holding its English and its Japanese (upstream twilog-search's
wording, word for word where upstream had the message). English is the default; Japanese is
chosen by ``--lang ja`` or a locale whose language is Japanese (:func:`choose_lang`, given the
environment by the CLI, the only reader of it). MCP tool descriptions, JSON results and the
JSON-RPC wire are not human text and do not change with the language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from string import Formatter
from typing import Any, Literal

__all__ = ["LANGS", "Lang", "Message", "catalogue", "choose_lang", "lang_of_locale"]

Lang = Literal["en", "ja"]
LANGS: tuple[Lang, ...] = ("en", "ja")
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""Read in this order, as POSIX does: the first one set decides."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message in every language; ``{name}`` fields are filled by :meth:`__call__`."""

    en: str
    ja: str

    def __call__(self, lang: Lang, **fields: Any) -> str:
        return (self.ja if lang == "ja" else self.en).format(**fields)

    def fields(self) -> dict[Lang, set[str]]:
        """The field names each language's text uses (a test checks they are the same)."""
        return {
            lang: {name for _, name, _, _ in Formatter().parse(getattr(self, lang)) if name} for lang in LANGS
        }


def lang_of_locale(environ: Mapping[str, str]) -> Lang:
    """``ja`` when the locale's language is Japanese (``ja_JP.UTF-8``, ``ja``), else ``en``."""
    for name in LOCALE_VARIABLES:
        value = environ.get(name)
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    return "en"


def choose_lang(flag: str | None, environ: Mapping[str, str]) -> Lang:
    """``--lang`` when given (``en`` or ``ja``), else the locale's (:func:`lang_of_locale`)."""
    if flag:
        if flag not in LANGS:
            raise ValueError(f"--lang takes {' or '.join(LANGS)}, got {flag!r}")
        return flag
    return lang_of_locale(environ)


# -- search and text search ---------------------------------------------------------------------

NO_RESULTS = Message("No results found", "検索結果が見つかりませんでした")
SEARCH_HEADER = Message(
    '🔍 Search results: {count} (query: "{query}")', '🔍 検索結果: {count}件 (クエリ: "{query}")'
)
NO_GOOD_MATCH = Message(
    "⚠️ No good match: even the closest post is a weak match (similarity {similarity})",
    "⚠️ 良い一致なし: 最も近い投稿も弱い一致です (類似度 {similarity})",
)
TEXT_HEADER = Message(
    '📝 Text search results: {count} (terms: "{term}")', '📝 テキスト検索結果: {count}件 (検索語: "{term}")'
)
NO_TEXT_RESULTS = Message(
    'No results found (terms: "{term}")', '検索結果が見つかりませんでした (検索語: "{term}")'
)
CLOSE_IN_MEANING = Message(
    "Some posts come close in meaning: search by meaning (search, or the search_similar tool) finds them.",
    "意味の近い投稿があります: 意味検索 (search、search_similar ツール) で見つかります。",
)
NOTHING_CLOSE = Message(
    "⚠️ No good match: no post comes close in meaning either.",
    "⚠️ 良い一致なし: 意味の近い投稿もありません。",
)

# -- likes and bookmarks: whose post, and which time ----------------------------------------------

AUTHOR_UNKNOWN = Message("(author not in the export)", "(投稿者はエクスポートにありません)")
POSTED_AT = Message("posted {time}", "投稿 {time}")
LIKED_AT = Message("liked {time}", "いいね {time}")
NO_TIME = Message("time not in the export", "日時はエクスポートにありません")

# -- users and statistics -------------------------------------------------------------------------

USERS_HEADER = Message("👥 Posts per user (top {count})", "👥 ユーザー別投稿統計 (上位{count}人)")
USER_ITEM = Message("{index}. {user}: {count} posts", "{index}. {user}: {count}投稿")
STATS_TITLE = Message("📊 Database statistics", "📊 データベース統計")
TOTAL_POSTS = Message("Posts: {count}", "総投稿数: {count}件")
TOTAL_USERS = Message("Users: {count}", "総ユーザー数: {count}人")
DATE_RANGE = Message("Period: {earliest} to {latest}", "データ期間: {earliest} ～ {latest}")
NO_DATE_RANGE = Message("Period: none", "データ期間: なし")
BY_KIND = Message("By kind: {counts}", "種類別: {counts}")
BY_PLATFORM = Message("By platform: {counts}", "プラットフォーム別: {counts}")
BY_ACCOUNT = Message("By account: {counts}", "アカウント別: {counts}")
UNKNOWN_NAME = Message("(unknown)", "(不明)")
ENRICHED = Message("Enriched: {done} of {total}", "エンリッチ済み: {done} / {total}件")
ENRICH_FAILED = Message(" ({count} failed)", " (失敗 {count}件)")

# -- threads --------------------------------------------------------------------------------------

THREAD_HEADER = Message(
    '🧵 Thread: {count} posts (ID: "{reference}")', '🧵 スレッド: {count}件 (ID: "{reference}")'
)
IN_REPLY_TO = Message("In reply to: {head}", "返信先: {head}")
PARENT_MISSING = Message("In reply to: {id} (not in the archive)", "返信先: {id} (アーカイブにありません)")

# -- status ---------------------------------------------------------------------------------------

STATUS_TITLE = Message("{mark} Archive Server Status", "{mark} Twilog Server Status")
STATE_RUNNING = Message("State: running", "状態: 稼働中")
STATE_STOPPED = Message("State: stopped", "状態: 停止中")
SERVER_TYPE = Message("Server type: {name}", "サーバータイプ: {name}")
MODEL = Message("Model: {name}", "モデル: {name}")
DATA_TITLE = Message("📊 Data:", "📊 データ統計:")
DATA_POSTS = Message("- Posts: {count}", "・投稿数: {count}件")
DATA_USERS = Message("- Users: {count}", "・ユーザー数: {count}人")
DATA_SUMMARIES = Message("- Summaries: {count}", "・要約数: {count}件")
BULLET = Message("- ", "・")
DATA_TAGS = Message("- Tags: {count}", "・タグ数: {count}件")

# -- embed_text -----------------------------------------------------------------------------------

EMBEDDED = Message(
    'Embedded:\nInput text: "{text}"\nBase64 length: {length} characters\nBase64 (first 20 characters): {head}...',
    'ベクトル化成功:\n入力テキスト: "{text}"\nBase64データ長: {length}文字\nBase64データ（先頭20文字）: {head}...',
)
NO_VECTOR = Message(
    'The embedding finished but returned no vector.\nInput text: "{text}"\nResponse: {response}',
    'ベクトル化は完了しましたが、ベクトルデータが返されませんでした。\n入力テキスト: "{text}"\nレスポンス: {response}',
)

# -- MCP tool failures (upstream's texts in Japanese) --------------------------------------------

TOOL_ERROR = Message("Error: {action} failed: {reason}", "エラー: {action}に失敗: {reason}")
TOOL_MISSING = Message("Error: {what}", "エラー: {what}")
SEARCH_ACTION = Message("search", "検索")
USER_STATS_ACTION = Message("user statistics", "ユーザー統計取得")
DATABASE_STATS_ACTION = Message("database statistics", "データベース統計取得")
TEXT_SEARCH_ACTION = Message("text search", "テキスト検索")
THREAD_ACTION = Message("thread", "スレッド取得")
EMBED_ACTION = Message("embedding", "ベクトル化")
NO_QUERY = Message("no search query given", "検索クエリが指定されていません")
NO_SEARCH_TERM = Message("no search term given", "検索文字列が指定されていません")
NO_POST_ID = Message("no post id or link given", "投稿のIDまたはURLが指定されていません")
NO_EMBED_TEXT = Message("no text to embed given", "ベクトル化するテキストが指定されていません")
STATUS_UNREACHABLE = Message(
    "Cannot reach the archive server: {reason}", "Twilog Serverに接続できません: {reason}"
)
SERVER_DOWN = Message("the archive server is not running", "サーバーが起動していません")
SERVER_TIMEOUT = Message(
    "connecting to the archive server timed out", "サーバーへの接続がタイムアウトしました"
)
CONNECTION_CLOSED = Message(
    "the WebSocket connection closed unexpectedly", "WebSocket接続が予期せず終了しました"
)
CONNECTION_ERROR = Message("WebSocket connection error: {detail}", "WebSocket接続エラー: {detail}")
SERVER_ERROR = Message("server error: {detail}", "サーバーエラー: {detail}")

# -- the shell ------------------------------------------------------------------------------------

SHELL_DATES = Message("date: {start} to {end}", "date: {start} ～ {end}")


def catalogue() -> dict[str, Message]:
    """Every message of this module by name (for the tests that check both languages)."""
    return {name: value for name, value in globals().items() if isinstance(value, Message)}
