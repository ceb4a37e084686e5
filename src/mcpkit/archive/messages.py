"""Every human-facing message of the archive's CLI, shell and MCP tool texts, in each language.

One declaration per message, holding its English and its Japanese (upstream twilog-search's
wording, word for word where upstream had the message). English is the default; Japanese is
chosen by ``--lang ja`` or a locale whose language is Japanese (:func:`choose_lang`, given the
environment by the CLI, the only reader of it). MCP tool descriptions, JSON results and the
JSON-RPC wire are not human text and do not change with the language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from string import Formatter
from typing import Any, Literal

from mcpkit.archive.methods import METHODS

__all__ = [
    "LANGS",
    "Counted",
    "Lang",
    "Message",
    "Said",
    "Worded",
    "Wording",
    "catalogue",
    "choose_lang",
    "in_lang",
    "lang_of_locale",
]

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


class Wording:
    """Mixed into a part's error class, before its mcpkit base (``class DaemonError(Wording,
    ArchiveError)``): the error's line is a catalogue message, ``str()`` the English line (logs,
    JSON), :meth:`text` the line in the reader's language. Not an exception itself, so the error
    tree stays the one :mod:`mcpkit.errors` draws."""

    message: Message
    fields: dict[str, Any]

    def __init__(self, message: Message, **fields: Any) -> None:
        super().__init__(message("en", **fields))  # type: ignore[call-arg]  # the error class's base
        self.message, self.fields = message, fields

    def text(self, lang: Lang) -> str:
        return self.message(lang, **self.fields)


class Said(str):
    """A message with its fields, kept for wording later: the ``str`` is the English text (what
    a JSON answer carries), :meth:`text` the text in the reader's language (what a page shows)."""

    message: Message
    fields: dict[str, Any]

    def __new__(cls, message: Message, **fields: Any) -> Said:
        said = super().__new__(cls, message("en", **fields))
        said.message, said.fields = message, fields
        return said

    def text(self, lang: Lang) -> str:
        return self.message(lang, **self.fields)


def in_lang(text: object, lang: Lang) -> str:
    """``text`` in ``lang`` when it holds its message (:class:`Said`, :class:`Wording`), else as it is."""
    return text.text(lang) if isinstance(text, Said | Wording) else str(text)


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

THREAD_HEADER = Counted(
    '🧵 Thread: {count} posts (ID: "{reference}")',
    '🧵 スレッド: {count}件 (ID: "{reference}")',
    one='🧵 Thread: {count} post (ID: "{reference}")',
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


# -- which archive answers a query (stderr) --------------------------------------------------------

IN_PROCESS = Message("in-process on {path}", "プロセス内で {path} を検索します")
NO_SERVER_ANSWERS = Message(
    "no archive server answers at {url}; searching in-process",
    "{url} で応答するアーカイブサーバーはありません。プロセス内で検索します",
)
OTHER_ARCHIVE_SERVED = Message(
    "the archive server at {url} serves {served}, not ${variable} ({named}); searching in-process",
    "{url} のアーカイブサーバーは ${variable} ({named}) ではなく {served} を提供しています。プロセス内で検索します",
)
USING_SERVER = Message(
    "using the archive server at {url} (db {db})", "{url} のアーカイブサーバーを使います (db {db})"
)
DB_NOT_NAMED_BY_SERVER = Message("not named by the server", "サーバーは示していません")
CANNOT_OPEN = Message("cannot open {path}: {reason}", "{path} を開けません: {reason}")
THREAD_MORE = Message(
    "-- {returned} of {total}: --offset {next} for more",
    "-- {total}件中 {returned}件: 続きは --offset {next}",
)

FIRST_RUN_MISSING = Message(
    "no archive at {path} yet: import an export first, for example "
    "`mcpkit archive import twitter-archive.zip --db {path}` "
    "(a Twilog CSV, an X, Mastodon or Bluesky archive as downloaded), then call again",
    "{path} にはまだアーカイブがありません: 先にエクスポートを取り込んでください。例: "
    "`mcpkit archive import twitter-archive.zip --db {path}` "
    "(Twilog の CSV、ダウンロードした X・Mastodon・Bluesky のアーカイブ)。その後もう一度呼び出してください",
)

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

ENDPOINT_REFUSED = Message(
    "{endpoint} refused the request ({status}): check the API key in MCPKIT_ENRICH_API_KEY or OPENAI_API_KEY",
    "{endpoint} がリクエストを拒否しました ({status}): MCPKIT_ENRICH_API_KEY か OPENAI_API_KEY の API キーを確かめてください",
)
ENDPOINT_NO_MODEL = Message(
    "{endpoint} answered {status} for model {model}: is the model pulled and the URL the /v1 endpoint?",
    "{endpoint} がモデル {model} に {status} を返しました: モデルは取得済みか、URL は /v1 のエンドポイントか確かめてください",
)
ENDPOINT_ANSWERED = Message(
    "the endpoint answered {status}: {detail}", "エンドポイントが {status} を返しました: {detail}"
)
ENDPOINT_ANSWERED_TIMES = Message(
    "the endpoint answered {status} {times} times", "エンドポイントが {status} を {times} 回返しました"
)
ENDPOINT_UNREACHABLE = Message("cannot reach {endpoint}: {detail}", "{endpoint} に接続できません: {detail}")
MALFORMED_TWICE = Message("malformed answer twice: {detail}", "2 回とも不正な回答: {detail}")

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
SHELL_ERROR = Message("error: {detail}", "エラー: {detail}")
SHELL_PAGE = Message(
    "-- {shown}/{total}: /next for more, /d N for details", "-- {shown}/{total}: /next で続き、/d N で詳細"
)
SHELL_CW = Message("CW: {text}", "注意書き: {text}")
SHELL_TAGS = Message("tags: {tags}", "タグ: {tags}")
SHELL_NOT_A_RANGE = Message("not a number or range: {part}", "番号でも範囲でもありません: {part}")
SHELL_BAD_RANGE = Message("bad range: {part}", "不正な範囲: {part}")
SHELL_GIVE_NUMBERS = Message("give numbers like 1-3,7", "1-3,7 のように番号を指定してください")
SHELL_TOP_USAGE = Message("/top N with N from {low} to {high}", "/top N (N は {low} から {high})")
SHELL_WEIGHTS_USAGE = Message("weights are numbers like 0.7,0.2,0.1", "重みは 0.7,0.2,0.1 のような数値です")
SHELL_MIN_MAX_USAGE = Message(
    "min=N and max=N take positive numbers", "min=N と max=N には正の数を指定します"
)
VERBATIM = Message("{text}", "{text}")
"""A line quoted as it came (a command's own syntax, a reason worded elsewhere)."""
SHELL_NO_MORE = Message("no more results", "これ以上の結果はありません")
SHELL_NO_SUCH_RESULT = Message("{n}: no such result", "{n}: その番号の結果はありません")
SHELL_UNKNOWN_COMMAND = Message(
    "unknown command {command}; /help lists them", "不明なコマンド {command}。/help で一覧を表示します"
)
_TOP_MIN, _TOP_MAX = METHODS["search_similar"].param("top_k").bounds
_MODES = " ".join(METHODS["search_similar"].param("mode").choices)
SHELL_HELP = Message(  # the limits and modes as the API declares them (archive/methods.py)
    f"""\
Type a query to search by meaning. Use V|T to require words T too, | T for words only.
  /user                show the user filter
  /user a,b            only these users          /user -c,d   leave these users out
  /user min=N max=M    users with N..M posts     /user clear  no user filter
  /date FROM [TO]      time range, dates or "YYYY-MM-DD HH:MM:SS"; /date clear
  /kind K[,K]          post reply quote repost like bookmark, or all; /kind clear
  /platform P[,P]      x mastodon bluesky        /account A[,A]   archived accounts
  /media yes|no|any    only posts with media, or without
  /visibility V[,V]    public unlisted followers direct, or all; default all but direct
  /top N               results per page, {_TOP_MIN}..{_TOP_MAX}
  /mode MODE [W,W,W]   {_MODES}
  /view normal|list|detail
  /next                next page of the last search
  /details 1-3,7  /d   full text of these results
  /help /?             this help        /exit /quit /q   leave""",
    f"""\
クエリを入力すると意味で検索します。V|T で語 T も必須に、| T で語だけの検索。
  /user                ユーザーフィルタを表示
  /user a,b            このユーザーだけ              /user -c,d   このユーザーを除く
  /user min=N max=M    投稿数 N..M のユーザー        /user clear  ユーザーフィルタなし
  /date FROM [TO]      期間: 日付か "YYYY-MM-DD HH:MM:SS"; /date clear
  /kind K[,K]          post reply quote repost like bookmark または all; /kind clear
  /platform P[,P]      x mastodon bluesky            /account A[,A]   アーカイブしたアカウント
  /media yes|no|any    メディア付きの投稿だけ、またはなしだけ
  /visibility V[,V]    public unlisted followers direct または all; 既定は direct 以外すべて
  /top N               1ページの件数、{_TOP_MIN}..{_TOP_MAX}
  /mode MODE [W,W,W]   {_MODES}
  /view normal|list|detail
  /next                直前の検索の次のページ
  /details 1-3,7  /d   これらの結果の全文
  /help /?             このヘルプ          /exit /quit /q   終了""",
)

# -- the web app (templates and page titles) -----------------------------------------------------

WEB_ARCHIVE = Message("Archive", "アーカイブ")
WEB_SKIP = Message("Skip to content", "本文へ移動")
WEB_PAGES = Message("Pages", "ページ")
WEB_SEARCH = Message("Search", "検索")
WEB_TIMELINE = Message("Timeline", "タイムライン")
WEB_ON_THIS_DAY = Message("On this day", "この日")
WEB_MEDIA = Message("Media", "メディア")
WEB_AS_JSON = Message("This page as JSON", "このページを JSON で")
WEB_MONTHS = Message(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", "1月 2月 3月 4月 5月 6月 7月 8月 9月 10月 11月 12月"
)
WEB_MONTH_YEAR = Message("{month} {year}", "{year}年{month}")
WEB_FACET_KIND = Message("Kind", "種類")
WEB_FACET_PLATFORM = Message("Platform", "プラットフォーム")
WEB_FACET_ACCOUNT = Message("Account", "アカウント")
WEB_FACET_LANG = Message("Language", "言語")
WEB_SEARCH_ARCHIVE = Message("Search the archive", "アーカイブを検索")
WEB_SEARCH_POSTS = Message("Search posts", "投稿を検索")
WEB_SYNTAX_HELP = Message("Syntax help", "検索の書き方")
WEB_MODE = Message("Mode", "モード")
WEB_MODE_TEXT = Message("Words", "語")
WEB_MODE_SEMANTIC = Message("Meaning", "意味")
WEB_MODE_HYBRID = Message("Both", "両方")
WEB_SYNTAX_HINT = Message(
    'Words: all must occur; "a phrase"; -word leaves out. Meaning: describe it, then | words to require.',
    '語: すべてを含む投稿; "語句" で完全一致; -語 で除外。意味: 内容を書き、| の後に必須の語。',
)
WEB_SYNTAX_TITLE = Message("Search syntax", "検索の書き方")
WEB_SYNTAX_BOTH = Message(
    "posts containing both words (case does not matter)", "両方の語を含む投稿 (大文字小文字は区別しません)"
)
WEB_SYNTAX_PHRASE = Message("the exact phrase, spaces included", "空白も含めて完全に一致する語句")
WEB_SYNTAX_EXCLUDE = Message("leave out posts containing a word", "その語を含む投稿を除く")
WEB_SYNTAX_ESCAPE = Message(
    "a backslash makes the next character literal", "バックスラッシュで次の文字をそのまま検索"
)
WEB_SYNTAX_MEANING = Message("Meaning:", "意味:")
WEB_SYNTAX_CLOSE = Message("posts close in meaning, in any language", "意味の近い投稿 (言語を問いません)")
WEB_SYNTAX_REQUIRE = Message(
    "close in meaning and containing the words after the bar", "意味が近く、| の後の語を含む投稿"
)
WEB_SYNTAX_WORDS_ONLY = Message("words only, newest first", "語だけで検索、新しい順")
WEB_CLOSE = Message("Close", "閉じる")
WEB_FILTERS = Message("Filters", "フィルタ")
WEB_FILTERS_ON = Message("Filters ({count} on)", "フィルタ ({count}件適用中)")
WEB_SHOW_RESULTS = Message("Show results", "結果を表示")
WEB_YEAR_AND_MONTH = Message("Year and month", "年と月")
WEB_DATE = Message("Date", "日付")
WEB_ANY_TIME = Message("Any time", "すべての期間")
WEB_NONE = Message("(none)", "(なし)")
WEB_ANY = Message("Any", "指定なし")
WEB_WITH_MEDIA = Message("With media", "メディアあり")
WEB_WITHOUT = Message("Without", "メディアなし")
WEB_TALK = Message("Who I talk to", "話し相手")
WEB_HASHTAGS = Message("Hashtags", "ハッシュタグ")
WEB_TALK_NOTE = Message(
    "Mentions and hashtags are counted in the newest posts of this selection (up to 1,000; for words, up to 200 matches).",
    "メンションとハッシュタグは、この絞り込みの新しい投稿 (最大 1,000件、語の検索では最大 200件) で数えています。",
)
WEB_APPLY_FILTERS = Message("Apply filters", "フィルタを適用")
WEB_SEARCH_FAILED = Message("Search failed", "検索に失敗しました")
WEB_NO_GOOD_MATCH = Message("No good match", "良い一致なし")
WEB_POSTS = Counted("{count} posts", "{count}件", one="{count} post")
WEB_POSTS_FOR = Counted(
    "{count} posts for “{query}”", "“{query}” の投稿 {count}件", one="{count} post for “{query}”"
)
WEB_ABOUT_POSTS_FOR = Counted(
    "about {count} posts for “{query}”",
    "“{query}” の投稿 約{count}件",
    one="about {count} post for “{query}”",
)
WEB_SHOW_CLOSEST = Message("Show the closest posts anyway", "それでも最も近い投稿を表示")
WEB_READ_MONTH = Message("Read {month} in order", "{month}を順に読む")
WEB_NEWER_RESULTS = Message("Newer results", "新しい結果")
WEB_MORE_RESULTS = Message("More results", "さらに表示")
WEB_UNDATED = Message("undated", "日時なし")
WEB_UNKNOWN_AUTHOR = Message("unknown author", "投稿者不明")
WEB_FOLLOWERS_ONLY = Message("followers only", "フォロワー限定")
WEB_DIRECT = Message("direct", "ダイレクト")
WEB_SIMILARITY = Message("similarity", "類似度")
WEB_CONTENT_WARNING = Message("Content warning:", "注意書き:")
WEB_VIDEO = Message("video", "動画")
WEB_AUDIO = Message("audio", "音声")
WEB_NOT_IN_EXPORT = Message("{type} not in the export", "{type} はエクスポートにありません")
WEB_ONLINE_COPY = Message("online copy", "オンラインのコピー")
WEB_OPEN_POST = Message("Open post", "投稿を開く")
WEB_FROM = Message(" from {time}", " ({time})")
WEB_ORIGINAL = Message("Original", "元の投稿")
WEB_ON_PLATFORM = Message(" on {platform}", " ({platform})")
WEB_SHOW_MORE = Message("Show more", "続きを表示")
WEB_OF_THIS_POST = Message(" of this post", " (この投稿)")
WEB_POST_BY = Message("Post by", "投稿者:")
WEB_IN_REPLY_TO = Message("In reply to", "返信先")
WEB_REPLY_MISSING = Message(
    "A reply to a post that is not in this archive.", "このアーカイブにない投稿への返信です。"
)
WEB_THREAD = Counted("Thread ({count} posts)", "スレッド ({count}件)", one="Thread ({count} post)")
WEB_QUOTED = Message("Quoted post", "引用された投稿")
WEB_REPOSTED = Message("Reposted post", "リポストされた投稿")
WEB_NEARBY = Message("Nearby posts", "前後の投稿")
WEB_NEWER_POST = Message("Newer post", "新しい投稿")
WEB_OLDER_POST = Message("Older post", "古い投稿")
WEB_TIMELINE_COUNT = Counted("{count} posts", "{count}件の投稿", one="{count} post")
WEB_WITHOUT_DATE = Message(", {count} without a date", "、日時なし {count}件")
WEB_CHOOSE_MONTH = Message(". Choose a month to see its posts.", "。月を選ぶとその月の投稿を表示します。")
WEB_HEATMAP_CAPTION = Message(
    "Posts per month; each count links to that month's posts",
    "月ごとの投稿数。数をクリックするとその月の投稿を表示",
)
WEB_YEAR = Message("Year", "年")
WEB_TOTAL = Message("Total", "合計")
WEB_MONTH_COUNT = Counted("{month}: {count} posts", "{month}: {count}件", one="{month}: {count} post")
WEB_READ_A_MONTH = Message("Read a month in order", "月ごとに順に読む")
WEB_NO_DATED = Message("No dated posts yet.", "日時のある投稿はまだありません。")
WEB_MONTHS_NAV = Message("Months", "月")
WEB_SEARCH_MONTH = Message("Search in this month", "この月を検索")
WEB_OLDEST_FIRST = Counted(
    "{count} posts, oldest first", "{count}件、古い順", one="{count} post, oldest first"
)
WEB_RANGE = Message(": {first} to {last}", ": {first}～{last}件目")
WEB_EARLIER_IN_MONTH = Message("Earlier posts of this month", "この月の前の投稿")
WEB_LATER_IN_MONTH = Message("Later posts of this month", "この月の後の投稿")
WEB_MEDIA_COUNT = Counted(
    "{count} posts with pictures, video or sound, newest first.",
    "画像・動画・音声のある投稿 {count}件、新しい順。",
    one="{count} post with pictures, video or sound, newest first.",
)
WEB_NEWER = Message("Newer", "新しい方へ")
WEB_OLDER = Message("Older", "古い方へ")
WEB_POST_FROM = Message("Post from {time}", "{time} の投稿")
WEB_UNKNOWN_DAY = Message("an unknown day", "不明な日")
WEB_ON_THIS_DAY_TITLE = Message("On this day: {month} {day}", "この日: {month}{day}日")
WEB_ANOTHER_DAY = Message("Another day (MM-DD)", "別の日 (MM-DD)")
WEB_SHOW = Message("Show", "表示")
WEB_ACROSS_YEARS = Counted(
    "{count} posts across the years", "各年の投稿 {count}件", one="{count} post across the years"
)
WEB_MORE_THIS_DAY = Message("More posts from this day", "この日の投稿をさらに表示")
WEB_BACK_TO_SEARCH = Message("Back to search", "検索に戻る")
WEB_BAD_REQUEST = Message("Bad request", "不正なリクエスト")
WEB_NOT_FOUND = Message("Not found", "見つかりません")
WEB_NO_POST_CONTAINS = Message(
    "No post contains {query} with these filters.", "この絞り込みで {query} を含む投稿はありません。"
)
WEB_SOME_CLOSE = Message(
    "No post contains {query} with these filters; some come close in meaning: search by Meaning or Hybrid.",
    "この絞り込みで {query} を含む投稿はありませんが、意味の近い投稿があります: 「意味」か「両方」で検索してください。",
)
WEB_NONE_CLOSE = Message(
    "No post contains {query} with these filters, and none comes close in meaning: no good match.",
    "この絞り込みで {query} を含む投稿はなく、意味の近い投稿もありません: 良い一致なし。",
)
WEB_ESTIMATES = Message(
    "Counts are estimates: the word is in many posts, so they come from the index or a sample.",
    "件数は推定です: 多くの投稿に含まれる語なので、索引か標本から数えています。",
)
WEB_WEAK_CALIBRATED = Message(
    "No good match for {query}: none of the closest posts reaches the match threshold measured for this model.",
    "{query} に良い一致はありません: 最も近い投稿も、このモデルで測った一致の閾値に届きません。",
)
WEB_WEAK_SCORE = Message(
    "No good match for {query}: the closest post scores {score}.",
    "{query} に良い一致はありません: 最も近い投稿のスコアは {score} です。",
)
WEB_NO_MATCH = Message(
    "No match for {query} with these filters.", "この絞り込みで {query} に一致する投稿はありません。"
)
WEB_AMONG_CLOSEST = Message(
    "Counts are among the {top} posts closest in meaning under these filters, not the whole archive.",
    "件数はこの絞り込みで意味の近い {top}件の中のもので、アーカイブ全体ではありません。",
)
WEB_POST_TITLE = Message("Post {id}", "投稿 {id}")


def catalogue() -> dict[str, Message]:
    """Every message of this module by name (for the tests that check both languages)."""
    return {name: value for name, value in globals().items() if isinstance(value, Message)}


class Worded:
    """The catalogue in one language, for the web app's templates: ``t.NAME(field=value)``.
    A name the catalogue lacks raises ``AttributeError`` (a template then fails to render)."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang
        self._messages = catalogue()

    def __getattr__(self, name: str) -> Callable[..., str]:
        try:
            message = self._messages[name]
        except KeyError:
            raise AttributeError(name) from None
        return partial(message, self.lang)

    def months(self) -> tuple[str, ...]:
        """The twelve months' short names, January first."""
        return tuple(WEB_MONTHS(self.lang).split())
