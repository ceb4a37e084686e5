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

__all__ = ["LANGS", "Counted", "Lang", "Message", "catalogue", "choose_lang", "lang_of_locale"]

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


@dataclass(frozen=True, slots=True)
class Counted(Message):
    """A message about ``{count}`` things: ``en`` is the plural, ``one`` English for exactly
    one (Japanese does not inflect). ``count`` is shown with thousands separators."""

    one: str = ""

    def __call__(self, lang: Lang, **fields: Any) -> str:
        count = fields["count"]
        text = self.ja if lang == "ja" else self.one if count == 1 else self.en
        return text.format(**{**fields, "count": f"{count:,}"})

    def fields(self) -> dict[Lang, set[str]]:
        found = Message.fields(self)
        one = {name for _, name, _, _ in Formatter().parse(self.one) if name}
        return {"en": found["en"] | one if one == found["en"] else {"<one differs>"}, "ja": found["ja"]}


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


# -- import ---------------------------------------------------------------------------------------

CLI_FAILED = Message("{action} failed: {reason}", "{action}に失敗: {reason}")
IMPORT_ACTION = Message("import", "取り込み")
EMBED_COMMAND_ACTION = Message("embed", "ベクトル化")
ENRICH_ACTION = Message("enrich", "エンリッチ")
NO_ARCHIVE = Message(
    "no archive at {path}: run `mcpkit archive import FILE --db {path}` first",
    "{path} にアーカイブがありません: 先に `mcpkit archive import FILE --db {path}` を実行してください",
)
HANDLE_WITHOUT_CAR = Message(
    "--handle names the account of a Bluesky CAR, and none of the paths is one",
    "--handle は Bluesky の CAR のアカウントを指定しますが、CAR のパスがありません",
)
IMPORT_INTERRUPTED = Message(
    "interrupted after {done} of {total} exports; run it again for the rest",
    "{total}件のエクスポートのうち {done}件の後で中断しました。もう一度実行すると残りを取り込みます",
)
IMPORT_WRITING = Message(
    "{name}: writing the text index and committing", "{name}: テキスト索引を書き込んで確定しています"
)
RECORDS_READ = Message("{count} records", "{count}件")
MALFORMED_SAMPLE = Message("  malformed: {sample}", "  不正なレコード: {sample}")
EXPORT_OF = Message("{name} of {account}", "{account} の{name}")
IMPORT_LINE = Message(
    "{head}: {kinds}; {new} new, {updated} updated, {unchanged} unchanged",
    "{head}: {kinds}; 新規 {new}件, 更新 {updated}件, 変更なし {unchanged}件",
)
NO_RECORDS = Message("no records", "レコードなし")
POSTS_READ = Counted("{count} posts", "投稿 {count}件", one="{count} post")
REPLIES_READ = Counted("{count} replies", "返信 {count}件", one="{count} reply")
QUOTES_READ = Counted("{count} quotes", "引用 {count}件", one="{count} quote")
REPOSTS_READ = Counted("{count} reposts", "リポスト {count}件", one="{count} repost")
LIKES_READ = Counted("{count} likes", "いいね {count}件", one="{count} like")
BOOKMARKS_READ = Counted("{count} bookmarks", "ブックマーク {count}件", one="{count} bookmark")
KIND_READ = Message("{count} {kind}", "{kind} {count}件")
REPEATING_RECORDS = Counted(
    "; {count} records repeating a post",
    "; 同じ投稿を繰り返すレコード {count}件",
    one="; {count} record repeating a post",
)
DIRECT_POSTS = Counted(
    "; {count} direct posts, shown only when asked for (--visibility direct)",
    "; ダイレクト投稿 {count}件 (--visibility direct で求めたときだけ表示)",
    one="; {count} direct post, shown only when asked for (--visibility direct)",
)
SKIPPED = Message("; skipped: {items}", "; 読み飛ばし: {items}")
MALFORMED_COUNT = Message("; malformed: {count}{sample}", "; 不正: {count}件{sample}")
SKIPPED_DIRECT_MESSAGES = Counted(
    "{count} direct messages", "ダイレクトメッセージ {count}件", one="{count} direct message"
)
SKIPPED_EARLIER_VERSIONS = Counted(
    "{count} earlier versions of edited posts",
    "編集された投稿の以前の版 {count}件",
    one="{count} earlier version of an edited post",
)
SKIPPED_RECORDS = Counted("{count} {name} records", "{name} レコード {count}件", one="{count} {name} record")

# -- embed ----------------------------------------------------------------------------------------

SPACE_CHOICE = Message(
    "--space must be one of {spaces}, got {space}", "--space は {spaces} のいずれかです (指定: {space})"
)
SPACE_DELETED = Message(
    "deleted the {space} vectors; embedding every post again with {model}",
    "{space} のベクトルを削除しました。{model} ですべての投稿を再びベクトル化します",
)
EMBEDDING_SPACE = Message("embedding {space}", "{space} をベクトル化中")
LOADING_MODEL = Message("loading model {model}…", "モデル {model} を読み込み中…")
SPACE_INTACT = Message(
    "{space}: the vector store is intact ({count} rows)", "{space}: ベクトルストアは無傷です ({count}行)"
)
SPACE_REPAIRED = Message(
    "{space}: repaired ({problem}): kept {kept} intact rows, dropped {dropped} to embed again",
    "{space}: 修復しました ({problem}): 無傷の {kept}行を残し、{dropped}行を再ベクトル化のため削除",
)
EMBED_DONE = Message(
    "{space}: {embedded} embedded, {already} already, {empty} empty after stripping ({model})",
    "{space}: ベクトル化 {embedded}件, 既存 {already}件, 除去後に空 {empty}件 ({model})",
)

# -- enrich ---------------------------------------------------------------------------------------

ENRICH_PLAN = Message(
    "{due} posts to enrich, {failed_before} of them failed before ({done_before} done, {imported} "
    "imported, {empty} empty); about {input_tokens} input and {output_tokens} output tokens with "
    "{model} at {endpoint}",
    "エンリッチする投稿 {due}件 (うち以前の失敗 {failed_before}件; 完了 {done_before}件, 取り込み済み "
    "{imported}件, 空 {empty}件); {endpoint} の {model} で入力 約{input_tokens}トークン, 出力 "
    "約{output_tokens}トークン",
)
ENRICHING = Message("enriching", "エンリッチ中")
ENRICH_DONE = Message(
    "{enriched} enriched, {failed} failed in {seconds} s ({rate} posts/s, {tokens} tokens)",
    "エンリッチ {enriched}件, 失敗 {failed}件, {seconds} 秒 (毎秒 {rate}件, {tokens}トークン)",
)
ENRICH_EMBEDDED = Message(
    "{space}: {embedded} embedded ({model})", "{space}: ベクトル化 {embedded}件 ({model})"
)
POST_FAILED = Message("  post {id}: {reason}", "  投稿 {id}: {reason}")
POSTS_FAILED = Message(
    "{count} posts failed; the next run tries them again",
    "{count}件の投稿が失敗しました。次の実行で再び試します",
)
POSTS_PER_SECOND = Message("{rate} posts/s", "毎秒 {rate}件")
TOKENS_USED = Message("{count} tokens", "{count}トークン")

# -- start, stop, status ------------------------------------------------------------------------

SERVER_STARTED = Message(
    "archive server running at {url} (pid {pid}, log {log})",
    "アーカイブサーバーが {url} で稼働中 (pid {pid}, ログ {log})",
)
SERVER_STOPPED = Message("archive server stopped (pid {pid})", "アーカイブサーバーを停止しました (pid {pid})")
NO_SERVER_RUNNING = Message("no archive server is running", "アーカイブサーバーは稼働していません")
ALREADY_RUNNING = Message(
    "an archive server is already running (pid {pid}, {url})",
    "アーカイブサーバーはすでに稼働中です (pid {pid}, {url})",
)
ANOTHER_SERVER = Message(
    "cannot start: another archive server answers at {url} ({server}); stop it or choose another --port",
    "起動できません: {url} で別のアーカイブサーバーが応答しています ({server})。それを停止するか別の --port を指定してください",
)
DID_NOT_START = Message(
    "the archive server did not start: {why} (log: {log})",
    "アーカイブサーバーが起動しませんでした: {why} (ログ: {log})",
)
DID_NOT_START_CODE = Message(
    "the archive server did not start: it exited with code {code} (log: {log})",
    "アーカイブサーバーが起動しませんでした: 終了コード {code} で終了しました (ログ: {log})",
)
DID_NOT_ANSWER = Message(
    "the archive server did not answer within {seconds} s: {why} (log: {log})",
    "アーカイブサーバーが {seconds} 秒以内に応答しませんでした: {why} (ログ: {log})",
)
UNKNOWN_ARCHIVE = Message("an unknown archive", "不明なアーカイブ")
STATUS_NOT_RUNNING = Message("archive server: not running", "アーカイブサーバー: 停止中")
STATUS_OTHER_SERVER = Message(
    "  but another server answers at {url} ({server}): query commands reach it",
    "  ただし {url} で別のサーバーが応答しています ({server}): 検索コマンドはそこにつながります",
)
STATUS_RUNNING = Message(
    "archive server: running at {url} (pid {pid}, db {db})",
    "アーカイブサーバー: {url} で稼働中 (pid {pid}, db {db})",
)
DB_NOT_NAMED = Message("unknown", "不明")
STATUS_SILENT = Message("  but it does not answer", "  ただし応答しません")

# -- the shell's own lines -------------------------------------------------------------------------

SHELL_BANNER = Message(
    "Type a query, /help for commands.", "クエリを入力してください。/help でコマンド一覧。"
)
SHELL_USAGE = Message("usage: {detail}", "使い方: {detail}")
SHELL_NO_MORE = Message("no more results", "これ以上の結果はありません")
SHELL_NO_SUCH_RESULT = Message("{n}: no such result", "{n}: その番号の結果はありません")
SHELL_UNKNOWN_COMMAND = Message(
    "unknown command {command}; /help lists them", "不明なコマンド {command}。/help で一覧を表示します"
)
SHELL_HELP = Message(
    """\
Type a query to search by meaning. Use V|T to require words T too, | T for words only.
  /user                show the user filter
  /user a,b            only these users          /user -c,d   leave these users out
  /user min=N max=M    users with N..M posts     /user clear  no user filter
  /date FROM [TO]      time range, dates or "YYYY-MM-DD HH:MM:SS"; /date clear
  /kind K[,K]          post reply quote repost like bookmark, or all; /kind clear
  /platform P[,P]      x mastodon bluesky        /account A[,A]   archived accounts
  /media yes|no|any    only posts with media, or without
  /visibility V[,V]    public unlisted followers direct, or all; default all but direct
  /top N               results per page, 1..100
  /mode MODE [W,W,W]   content reasoning summary average maximum minimum
  /view normal|list|detail
  /next                next page of the last search
  /details 1-3,7  /d   full text of these results
  /help /?             this help        /exit /quit /q   leave""",
    """\
クエリを入力すると意味で検索します。V|T で語 T も必須に、| T で語だけの検索。
  /user                ユーザーフィルタを表示
  /user a,b            このユーザーだけ              /user -c,d   このユーザーを除く
  /user min=N max=M    投稿数 N..M のユーザー        /user clear  ユーザーフィルタなし
  /date FROM [TO]      期間: 日付か "YYYY-MM-DD HH:MM:SS"; /date clear
  /kind K[,K]          post reply quote repost like bookmark または all; /kind clear
  /platform P[,P]      x mastodon bluesky            /account A[,A]   アーカイブしたアカウント
  /media yes|no|any    メディア付きの投稿だけ、またはなしだけ
  /visibility V[,V]    public unlisted followers direct または all; 既定は direct 以外すべて
  /top N               1ページの件数、1..100
  /mode MODE [W,W,W]   content reasoning summary average maximum minimum
  /view normal|list|detail
  /next                直前の検索の次のページ
  /details 1-3,7  /d   これらの結果の全文
  /help /?             このヘルプ          /exit /quit /q   終了""",
)


def catalogue() -> dict[str, Message]:
    """Every message of this module by name (for the tests that check both languages)."""
    return {name: value for name, value in globals().items() if isinstance(value, Message)}
