//! The built-in vocabulary of the gesture guard: the words that say a gesture pays, deletes or
//! changes a secret, in the common languages of the web, and the words that name sensitive form
//! fields. A policy can add words (`gesture_words`), never take one away.
//!
//! How a label is read:
//! - It is lower-cased and cut into words (runs of letters and digits). A phrase matches when
//!   its words follow one another in the label (`place order` in "Place your order" does not;
//!   `place your order` is listed). An entry ending in `*` matches any word it begins.
//! - Chinese, Japanese and Thai have no spaces: their entries match anywhere in the label.
//!   Korean has them, and matches by words like the others; so does Persian, whose zero-width
//!   non-joiner cuts a word in two (its entries are cut the same way).
//! - Paying and deleting are verbs the label carries on its own (`Pay €1,240.00`, `Delete this
//!   repository`). A secret changes when a label names the secret and a change together
//!   (`Change password`, `Passwort zurücksetzen`), or names a secret that only ever changes
//!   (`two-factor`, `recovery codes`).
//! - The written rule for look-alikes: **a deletion of something that is not data is no
//!   deletion**. A deletion word in a label that also names a filter, a search, a selection, a
//!   sort, or a shopping cart or wish list (`Remove filter`, `Supprimer le filtre`, `Eliminar del
//!   carrito`, `Filter löschen`) does not count. `Remove` alone is no deletion word in English
//!   (`Remove filter`, `Remove from cart`), `remove account` is. And **putting something in a
//!   cart is not paying**: `Add to cart`, `In den Warenkorb`, `カートに入れる` carry no paying
//!   word; `Checkout` and `Continue to payment` neither (they lead to the step that pays). Nor
//!   is it sending: `In winkelwagen plaatsen` posts nothing (`plaatsen` posts elsewhere).

/// What a matched word says the gesture does (the kinds the human is asked about).
pub use tabtunnel_wire::gestures::GestureKind as Kind;

/// One language's words.
pub struct Language {
    pub name: &'static str,
    pub paying: &'static [&'static str],
    pub deleting: &'static [&'static str],
    /// Secrets that a label names with a change (`password` + `change`).
    pub secret_nouns: &'static [&'static str],
    pub secret_changes: &'static [&'static str],
    /// Secrets that are named only when they change.
    pub secrets: &'static [&'static str],
    /// Things whose deletion deletes no data (see the module's rule).
    pub not_data: &'static [&'static str],
    /// Sending or publishing in the human's name; counted only where the gesture or request
    /// writes (a `Send` that opens a dialog asks nothing).
    pub sending: &'static [&'static str],
    /// Sharing and visibility; counted, like sending, only where it writes.
    pub sharing: &'static [&'static str],
    /// Verbs that move money when an amount stands next to them (`Send $25`, `Subscribe –
    /// $9.99/month`); without one they are no paying (`Subscribe to our newsletter`).
    pub money_verbs: &'static [&'static str],
}

pub const LANGUAGES: &[Language] = &[
    Language {
        name: "English",
        paying: &[
            "pay",
            "pay now",
            "buy",
            "buy now",
            "buy it now",
            "purchase now",
            "complete purchase",
            "confirm purchase",
            "place order",
            "place your order",
            "submit order",
            "confirm order",
            "complete order",
            "order now",
            "confirm payment",
            "make payment",
            "make a payment",
            "submit payment",
            "send money",
            "send payment",
            "transfer",
            "transfer money",
            "transfer funds",
            "wire transfer",
            // Wallets' RPC methods (bitcoind's, Ethereum's `eth_sendTransaction`).
            "sendtoaddress",
            "sendmany",
            "send transaction",
            "send raw transaction",
            "donate",
            "place bid",
            "place your bid",
            "confirm bid",
            "submit bid",
            "bid now",
            "issue refund",
            "confirm plan change",
        ],
        deleting: &[
            "delete",
            "destroy",
            "erase",
            "wipe",
            "purge",
            "permanently delete",
            "close account",
            "close my account",
            "close your account",
            "deactivate account",
            "deactivate my account",
            "terminate account",
            "remove account",
            "remove my account",
            "revoke",
            "revoke access",
            "terminate",
            "terminate instance",
            "empty trash",
            "empty the trash",
            "empty bin",
            "empty recycle bin",
            "empty deleted items",
            "drop database",
            "drop table",
            "delete forever",
            "move to trash",
            "move to bin",
        ],
        secret_nouns: &["password", "passphrase", "pin code", "email address"],
        secret_changes: &["change", "update", "reset", "set", "new", "save", "create", "choose", "edit"],
        secrets: &[
            "two factor",
            "two step",
            "2fa",
            "mfa",
            "authenticator",
            "recovery codes",
            "backup codes",
            "security key",
            "security keys",
            "passkey",
            "api key",
            "api keys",
            "access key",
            "access keys",
            "access token",
            "access tokens",
            "personal access token",
            "generate token",
            "generate new token",
            "regenerate",
            "ssh key",
            "deploy key",
            "secret key",
            "client secret",
            "recovery email",
            "recovery phone",
            "backup email",
            "authorize",
            "authorize application",
            "app password",
            "app passwords",
            "create token",
            "new token",
            "gen token",
            "token create",
            "token generate",
        ],
        not_data: &[
            "filter",
            "filters",
            "search",
            "searches",
            "selection",
            "sort",
            "sorting",
            "cart",
            "basket",
            "bag",
            "wishlist",
            "wish list",
            "formatting",
            "highlight",
        ],
        sending: &[
            "send",
            "send now",
            "send message",
            "send email",
            "send reply",
            "post",
            "post reply",
            "post comment",
            "post review",
            "submit review",
            "publish",
            "publish now",
            "reply",
            "tweet",
            "toot",
            "comment",
            "add comment",
        ],
        sharing: &[
            "public",
            "share",
            "share link",
            "share now",
            "create link",
            "create share link",
            "invite",
            "send invite",
            "send invitation",
            "invite people",
            "invite members",
            "add member",
            "add members",
            "add people",
            "add collaborator",
            "make public",
            "change visibility",
            "publish to web",
            "anyone with the link",
            "public link",
            "change role",
            "make admin",
            "make owner",
            "transfer ownership",
            "grant access",
        ],
        money_verbs: &[
            "sell",
            "exchange",
            "convert",
            "top up",
            "add funds",
            "add money",
            "make an offer",
            "make offer",
            "send",
            "pay",
            "transfer",
            "subscribe",
            "upgrade",
            "renew",
            "tip",
            "donate",
            "give",
            "pledge",
            "bid",
            "book",
            "reserve",
            "rent",
            "start",
            "join",
            "confirm",
            "buy",
            "order",
            "contribute",
            "support",
            "refund",
        ],
    },
    Language {
        name: "German",
        paying: &[
            "bezahlen",
            "jetzt bezahlen",
            "jetzt zahlen",
            "kaufen",
            "jetzt kaufen",
            "kostenpflichtig bestellen",
            "zahlungspflichtig bestellen",
            "jetzt bestellen",
            "bestellung abschicken",
            "bestellung aufgeben",
            "bestellung abschließen",
            "zahlung bestätigen",
            "überweisen",
            "überweisung",
            "spenden",
        ],
        deleting: &[
            "löschen",
            "lösche",
            "endgültig löschen",
            "vernichten",
            "konto schließen",
            "konto deaktivieren",
            "konto auflösen",
            "widerrufen",
            "papierkorb leeren",
            "endgültig entfernen",
        ],
        secret_nouns: &["passwort", "kennwort", "e mail adresse"],
        secret_changes: &[
            "ändern",
            "zurücksetzen",
            "festlegen",
            "neues",
            "neue",
            "speichern",
            "aktualisieren",
            "setzen",
        ],
        secrets: &[
            "zwei faktor",
            "zweistufige",
            "2fa",
            "sicherheitsschlüssel",
            "api schlüssel",
            "zugriffstoken",
            "token erstellen",
            "token generieren",
            "wiederherstellungscodes",
            "autorisieren",
        ],
        not_data: &["filter", "suche", "auswahl", "sortierung", "warenkorb", "einkaufswagen", "merkliste"],
        sending: &[
            "senden",
            "absenden",
            "jetzt senden",
            "nachricht senden",
            "veröffentlichen",
            "antworten",
            "posten",
        ],
        sharing: &[
            "öffentlich",
            "teilen",
            "freigeben",
            "einladen",
            "link erstellen",
            "öffentlich machen",
            "sichtbarkeit ändern",
            "jeder mit dem link",
            "rolle ändern",
            "mitglied hinzufügen",
        ],
        money_verbs: &[
            "verkaufen",
            "tauschen",
            "umtauschen",
            "aufladen",
            "angebot machen",
            "senden",
            "überweisen",
            "zahlen",
            "bezahlen",
            "abonnieren",
            "upgraden",
            "verlängern",
            "spenden",
            "buchen",
            "bestellen",
            "kaufen",
            "bestätigen",
        ],
    },
    Language {
        name: "French",
        paying: &[
            "commande avec obligation de paiement",
            "payer",
            "payer maintenant",
            "acheter",
            "acheter maintenant",
            "commander",
            "passer la commande",
            "passer commande",
            "valider la commande",
            "confirmer la commande",
            "confirmer le paiement",
            "effectuer le paiement",
            "régler",
            "virement",
            "effectuer un virement",
            "faire un don",
        ],
        deleting: &[
            "supprimer",
            "supprimer définitivement",
            "effacer",
            "détruire",
            "fermer le compte",
            "fermer mon compte",
            "clôturer le compte",
            "désactiver le compte",
            "révoquer",
            "vider la corbeille",
        ],
        secret_nouns: &["mot de passe", "code pin", "adresse e mail"],
        secret_changes: &[
            "changer",
            "modifier",
            "réinitialiser",
            "définir",
            "nouveau",
            "enregistrer",
            "mettre à jour",
        ],
        secrets: &[
            "double authentification",
            "deux facteurs",
            "2fa",
            "validation en deux étapes",
            "clé de sécurité",
            "clé api",
            "jeton",
            "codes de récupération",
            "clé d accès",
            "autoriser",
        ],
        not_data: &["filtre", "filtres", "recherche", "sélection", "tri", "panier", "liste de souhaits"],
        sending: &["envoyer", "envoyer le message", "publier", "répondre", "poster"],
        sharing: &[
            "public",
            "publique",
            "partager",
            "inviter",
            "rendre public",
            "créer un lien",
            "modifier la visibilité",
            "tous les utilisateurs disposant du lien",
            "changer le rôle",
            "ajouter un membre",
        ],
        money_verbs: &[
            "vendre",
            "échanger",
            "convertir",
            "recharger",
            "alimenter",
            "faire une offre",
            "envoyer",
            "payer",
            "virer",
            "s abonner",
            "abonner",
            "souscrire",
            "renouveler",
            "réserver",
            "confirmer",
            "commander",
            "acheter",
        ],
    },
    Language {
        name: "Spanish",
        paying: &[
            "pedido con obligación de pago",
            "pagar",
            "pagar ahora",
            "comprar",
            "comprar ahora",
            "realizar pedido",
            "hacer pedido",
            "confirmar pedido",
            "tramitar pedido",
            "finalizar compra",
            "confirmar compra",
            "confirmar pago",
            "transferir",
            "transferencia",
            "donar",
        ],
        deleting: &[
            "eliminar",
            "borrar",
            "suprimir",
            "destruir",
            "cerrar cuenta",
            "cerrar mi cuenta",
            "desactivar cuenta",
            "revocar",
            "vaciar papelera",
            "vaciar la papelera",
        ],
        secret_nouns: &["contraseña", "clave", "correo electrónico"],
        secret_changes: &[
            "cambiar",
            "actualizar",
            "restablecer",
            "establecer",
            "nueva",
            "guardar",
            "modificar",
        ],
        secrets: &[
            "dos factores",
            "2fa",
            "verificación en dos pasos",
            "llave de seguridad",
            "clave de api",
            "token de acceso",
            "códigos de recuperación",
            "autorizar",
        ],
        not_data: &["filtro", "filtros", "búsqueda", "selección", "orden", "carrito", "cesta", "favoritos"],
        sending: &["enviar", "enviar mensaje", "publicar", "responder"],
        sharing: &[
            "público",
            "pública",
            "compartir",
            "invitar",
            "hacer público",
            "hacer pública",
            "cambiar visibilidad",
            "crear enlace",
            "cualquier persona con el enlace",
            "cambiar rol",
            "añadir miembro",
        ],
        money_verbs: &[
            "vender",
            "intercambiar",
            "convertir",
            "recargar",
            "añadir fondos",
            "hacer una oferta",
            "enviar",
            "pagar",
            "transferir",
            "suscribirse",
            "suscribir",
            "renovar",
            "reservar",
            "confirmar",
            "comprar",
            "donar",
        ],
    },
    Language {
        name: "Italian",
        paying: &[
            "ordine con obbligo di pagamento",
            "paga",
            "paga ora",
            "pagare",
            "acquista",
            "acquista ora",
            "compra",
            "compra ora",
            "effettua l ordine",
            "conferma ordine",
            "conferma l ordine",
            "concludi ordine",
            "invia ordine",
            "conferma pagamento",
            "bonifico",
            "trasferisci",
            "dona",
        ],
        deleting: &[
            "elimina",
            "eliminare",
            "cancella",
            "cancellare",
            "distruggi",
            "chiudi account",
            "chiudi il conto",
            "disattiva account",
            "revoca",
            "svuota cestino",
            "svuota il cestino",
        ],
        secret_nouns: &["password", "indirizzo email"],
        secret_changes: &["cambia", "modifica", "reimposta", "imposta", "nuova", "salva", "aggiorna"],
        secrets: &[
            "due fattori",
            "2fa",
            "verifica in due passaggi",
            "chiave di sicurezza",
            "chiave api",
            "token di accesso",
            "codici di recupero",
            "autorizza",
        ],
        not_data: &[
            "filtro",
            "filtri",
            "ricerca",
            "selezione",
            "ordinamento",
            "carrello",
            "lista dei desideri",
        ],
        sending: &["invia", "invia messaggio", "pubblica", "rispondi"],
        sharing: &[
            "pubblico",
            "condividi",
            "invita",
            "rendi pubblico",
            "rendi pubblica",
            "crea link",
            "cambia visibilità",
            "chiunque abbia il link",
            "cambia ruolo",
            "aggiungi membro",
        ],
        money_verbs: &[
            "vendi",
            "vendere",
            "scambia",
            "converti",
            "ricarica",
            "fai un offerta",
            "fare un offerta",
            "invia",
            "paga",
            "trasferisci",
            "abbonati",
            "abbonarsi",
            "rinnova",
            "prenota",
            "conferma",
            "acquista",
            "compra",
            "dona",
        ],
    },
    Language {
        name: "Portuguese",
        paying: &[
            "encomenda com obrigação de pagamento",
            "pagar",
            "pagar agora",
            "comprar",
            "comprar agora",
            "finalizar compra",
            "finalizar pedido",
            "fazer pedido",
            "confirmar pedido",
            "confirmar pagamento",
            "transferir",
            "transferência",
            "doar",
        ],
        deleting: &[
            "excluir",
            "apagar",
            "eliminar",
            "deletar",
            "destruir",
            "encerrar conta",
            "fechar conta",
            "desativar conta",
            "revogar",
            "esvaziar lixeira",
            "esvaziar a lixeira",
        ],
        secret_nouns: &["senha", "endereço de e mail"],
        secret_changes: &["alterar", "mudar", "redefinir", "definir", "nova", "salvar", "atualizar"],
        secrets: &[
            "dois fatores",
            "2fa",
            "verificação em duas etapas",
            "chave de segurança",
            "chave de api",
            "token de acesso",
            "códigos de recuperação",
            "autorizar",
        ],
        not_data: &["filtro", "filtros", "pesquisa", "busca", "seleção", "carrinho", "sacola", "favoritos"],
        sending: &["enviar", "enviar mensagem", "publicar", "responder"],
        sharing: &[
            "público",
            "pública",
            "compartilhar",
            "partilhar",
            "convidar",
            "tornar público",
            "tornar pública",
            "alterar visibilidade",
            "criar link",
            "qualquer pessoa com o link",
            "alterar função",
            "adicionar membro",
        ],
        money_verbs: &[
            "vender",
            "trocar",
            "converter",
            "recarregar",
            "adicionar fundos",
            "fazer uma oferta",
            "colocar à venda",
            "enviar",
            "pagar",
            "transferir",
            "assinar",
            "renovar",
            "reservar",
            "confirmar",
            "comprar",
            "doar",
        ],
    },
    Language {
        name: "Dutch",
        paying: &[
            "bestelling met betalingsverplichting",
            "betalen",
            "nu betalen",
            "betaal",
            "kopen",
            "nu kopen",
            "koop",
            "bestellen",
            "bestelling plaatsen",
            "overmaken",
            "overschrijven",
            "doneren",
        ],
        deleting: &[
            "verwijderen",
            "verwijder",
            "definitief verwijderen",
            "wissen",
            "vernietigen",
            "account sluiten",
            "account opheffen",
            "intrekken",
            "prullenbak legen",
        ],
        secret_nouns: &["wachtwoord", "pincode", "e mailadres"],
        secret_changes: &[
            "wijzigen",
            "wijzig",
            "opnieuw instellen",
            "herstellen",
            "instellen",
            "nieuw",
            "opslaan",
            "bijwerken",
        ],
        secrets: &[
            "tweestapsverificatie",
            "twee factor",
            "2fa",
            "beveiligingssleutel",
            "api sleutel",
            "toegangstoken",
            "herstelcodes",
            "autoriseren",
        ],
        not_data: &[
            "filter",
            "filters",
            "zoekopdracht",
            "selectie",
            "sortering",
            "winkelwagen",
            "winkelmand",
            "verlanglijst",
        ],
        sending: &[
            "verzenden",
            "versturen",
            "verstuur",
            "verzend",
            "publiceren",
            "plaatsen",
            "reageren",
            "beantwoorden",
        ],
        sharing: &[
            "openbaar",
            "delen",
            "uitnodigen",
            "openbaar maken",
            "link maken",
            "zichtbaarheid wijzigen",
            "iedereen met de link",
            "rol wijzigen",
            "lid toevoegen",
        ],
        money_verbs: &[
            "verkopen",
            "omwisselen",
            "opwaarderen",
            "bod uitbrengen",
            "doe een bod",
            "verzenden",
            "versturen",
            "betaal",
            "betalen",
            "overmaken",
            "abonneren",
            "abonneer",
            "verlengen",
            "reserveren",
            "boeken",
            "bevestigen",
            "bestellen",
            "kopen",
            "doneren",
        ],
    },
    Language {
        name: "Polish",
        paying: &[
            "zapłać",
            "zapłać teraz",
            "płacę",
            "kup",
            "kup teraz",
            "kupuję",
            "zamów",
            "zamawiam",
            "zamawiam i płacę",
            "złóż zamówienie",
            "potwierdź płatność",
            "przelew",
            "przelej",
            "wpłać",
            "przekaż darowiznę",
        ],
        deleting: &[
            "usuń",
            "usunąć",
            "skasuj",
            "wymaż",
            "zniszcz",
            "zamknij konto",
            "dezaktywuj konto",
            "unieważnij",
            "cofnij dostęp",
            "opróżnij kosz",
        ],
        secret_nouns: &["hasło", "hasła", "hasłem", "adres e mail"],
        secret_changes: &["zmień", "zmiana", "resetuj", "zresetuj", "ustaw", "nowe", "zapisz", "zaktualizuj"],
        secrets: &[
            "weryfikacja dwuetapowa",
            "uwierzytelnianie dwuskładnikowe",
            "2fa",
            "klucz bezpieczeństwa",
            "klucz api",
            "token dostępu",
            "kody odzyskiwania",
            "autoryzuj",
        ],
        not_data: &[
            "filtr",
            "filtry",
            "filtra",
            "wyszukiwanie",
            "wybór",
            "sortowanie",
            "koszyk",
            "koszyka",
            "listy życzeń",
        ],
        sending: &["wyślij", "wyślij wiadomość", "opublikuj", "publikuj", "odpowiedz"],
        sharing: &[
            "publiczny",
            "publiczne",
            "udostępnij",
            "zaproś",
            "upublicznij",
            "utwórz link",
            "zmień widoczność",
            "każdy kto ma link",
            "zmień rolę",
            "dodaj członka",
        ],
        money_verbs: &[
            "sprzedaj",
            "wymień",
            "doładuj",
            "złóż ofertę",
            "wyślij",
            "zapłać",
            "przelej",
            "subskrybuj",
            "zasubskrybuj",
            "odnów",
            "zarezerwuj",
            "potwierdź",
            "kup",
            "zamów",
            "wpłać",
        ],
    },
    Language {
        name: "Japanese",
        paying: &[
            "支払う",
            "お支払い",
            "支払いを確定",
            "今すぐ購入",
            "購入する",
            "購入を確定",
            "注文を確定",
            "注文確定",
            "注文する",
            "決済する",
            "決済を確定",
            "振り込む",
            "振込",
            "送金",
            "寄付",
        ],
        deleting: &[
            "ゴミ箱に移動",
            "削除",
            "消去",
            "破棄",
            "退会",
            "解約",
            "アカウントを閉じる",
            "ゴミ箱を空にする",
        ],
        secret_nouns: &["パスワード", "暗証番号", "メールアドレス"],
        secret_changes: &["変更", "再設定", "リセット", "設定", "更新", "新しい"],
        secrets: &[
            "二段階認証",
            "2段階認証",
            "二要素認証",
            "セキュリティキー",
            "apiキー",
            "アクセストークン",
            "リカバリーコード",
            "連携を許可",
        ],
        not_data: &["フィルタ", "フィルター", "絞り込み", "検索", "選択", "並べ替え", "カート", "お気に入り"],
        sending: &["送信", "投稿", "返信"],
        sharing: &["共有", "招待", "公開", "リンクを知っている全員", "リンクを作成", "権限を変更"],
        money_verbs: &[
            "売却",
            "両替",
            "チャージ",
            "入金",
            "送金",
            "支払",
            "購読",
            "登録",
            "申し込",
            "更新",
            "予約",
            "確定",
            "購入",
            "注文",
        ],
    },
    Language {
        name: "Chinese",
        paying: &[
            "支付",
            "付款",
            "立即付款",
            "立即支付",
            "购买",
            "購買",
            "立即购买",
            "提交订单",
            "提交訂單",
            "确认订单",
            "確認訂單",
            "确认付款",
            "转账",
            "轉帳",
            "汇款",
            "匯款",
            "捐款",
        ],
        deleting: &[
            "移至回收站",
            "移到回收站",
            "移入回收站",
            "放入回收站",
            "移至废纸篓",
            "删除",
            "刪除",
            "销毁",
            "銷毀",
            "注销",
            "註銷",
            "撤销",
            "撤銷",
            "清空回收站",
            "清空垃圾箱",
        ],
        secret_nouns: &["密码", "密碼", "邮箱", "電子郵件"],
        secret_changes: &["修改", "更改", "重置", "设置", "設定", "更新", "新"],
        secrets: &[
            "双重验证",
            "两步验证",
            "兩步驟驗證",
            "双因素",
            "雙因素",
            "安全密钥",
            "api密钥",
            "访问令牌",
            "恢复码",
            "授权",
            "授權",
        ],
        not_data: &["筛选", "篩選", "过滤", "過濾", "搜索", "搜尋", "购物车", "購物車", "收藏"],
        sending: &["发送", "發送", "发布", "發佈", "發布", "回复", "回覆", "发表", "發表"],
        sharing: &["分享", "共享", "邀请", "邀請", "公开", "公開", "更改权限", "创建链接"],
        money_verbs: &[
            "卖出", "出售", "兑换", "充值", "出价", "支付", "付款", "转账", "发送", "订阅", "訂閱", "续费",
            "續費", "预订", "預訂", "确认", "確認", "购买", "購買",
        ],
    },
    // Russian and Ukrainian: `корзина` and `кошик` are both the cart and the trash, so only
    // `из корзины` (out of the cart) is no data, and emptying either is asked about. `удал*`
    // would be `удалённый` (remote), `оплат*` `оплата` (`Перейти к оплате`); `перевести` alone
    // is also to translate, `заказать` alone `Заказать звонок` (a call back): next to an
    // amount only.
    Language {
        name: "Russian",
        paying: &[
            "оплатить",
            "оплатить сейчас",
            "оплатить заказ",
            "оплатить онлайн",
            "оплатить картой",
            "купить",
            "купить сейчас",
            "купить в один клик",
            "купить в 1 клик",
            "подтвердить заказ",
            "подтвердить оплату",
            "подтвердить покупку",
            "подтвердить перевод",
            "перевести деньги",
            "перевести средства",
            "отправить деньги",
            "пожертвовать",
            "сделать пожертвование",
            "сделать ставку",
        ],
        deleting: &[
            "удалить",
            "удалите",
            "удалить навсегда",
            "удалить безвозвратно",
            "удалить аккаунт",
            "удалить учётную запись",
            "удалить учетную запись",
            "стереть",
            "уничтожить",
            "закрыть счёт",
            "закрыть счет",
            "деактивировать аккаунт",
            "отозвать",
            "отозвать доступ",
            "очистить корзину",
            "переместить в корзину",
        ],
        secret_nouns: &["парол*", "пин код", "адрес электронной почты"],
        secret_changes: &[
            "изменить",
            "сменить",
            "смена",
            "изменение",
            "сбросить",
            "сброс",
            "установить",
            "задать",
            "новый",
            "сохранить",
            "обновить",
            "создать",
        ],
        secrets: &[
            "двухфакторн*",
            "двухэтапн*",
            "2fa",
            "ключ безопасности",
            "ключ api",
            "api ключ",
            "токен доступа",
            "создать токен",
            "сгенерировать токен",
            "резервные коды",
            "коды восстановления",
            "авторизовать",
        ],
        not_data: &[
            "фильтр*",
            "поиск*",
            "выделение",
            "сортировк*",
            "из корзины",
            "избранн*",
            "список желаний",
        ],
        sending: &[
            "отправить",
            "отправить сообщение",
            "опубликовать",
            "ответить",
            "комментировать",
            "оставить комментарий",
            "отправить отзыв",
        ],
        sharing: &[
            "поделиться",
            "пригласить",
            "открыть доступ",
            "предоставить доступ",
            "сделать публичным",
            "сделать общедоступным",
            "доступ по ссылке",
            "все у кого есть ссылка",
            "создать ссылку",
            "изменить роль",
            "добавить участника",
            "передать права владельца",
        ],
        money_verbs: &[
            "продать",
            "обменять",
            "пополнить",
            "отправить",
            "оплатить",
            "перевести",
            "подписаться",
            "оформить подписку",
            "продлить",
            "забронировать",
            "подтвердить",
            "заказать",
            "купить",
            "пожертвовать",
            "поддержать",
        ],
    },
    Language {
        name: "Ukrainian",
        paying: &[
            "сплатити",
            "сплатити зараз",
            "оплатити",
            "оплатити зараз",
            "оплатити замовлення",
            "купити",
            "купити зараз",
            "купити в один клік",
            "підтвердити замовлення",
            "підтвердити оплату",
            "підтвердити переказ",
            "переказати",
            "переказати кошти",
            "надіслати гроші",
            "задонатити",
            "пожертвувати",
            "зробити ставку",
        ],
        deleting: &[
            "видалити",
            "видаліть",
            "видалити назавжди",
            "видалити обліковий запис",
            "видалити акаунт",
            "стерти",
            "знищити",
            "закрити рахунок",
            "деактивувати обліковий запис",
            "відкликати",
            "відкликати доступ",
            "очистити кошик",
            "перемістити в кошик",
        ],
        secret_nouns: &["парол*", "пін код", "адреса електронної пошти"],
        secret_changes: &[
            "змінити",
            "зміна",
            "скинути",
            "встановити",
            "новий",
            "зберегти",
            "оновити",
            "створити",
        ],
        secrets: &[
            "двофакторн*",
            "двоетапн*",
            "2fa",
            "ключ безпеки",
            "ключ api",
            "токен доступу",
            "створити токен",
            "резервні коди",
            "коди відновлення",
            "авторизувати",
        ],
        not_data: &[
            "фільтр*",
            "пошук*",
            "виділення",
            "сортуванн*",
            "з кошика",
            "обране",
            "обраного",
            "список бажань",
        ],
        sending: &[
            "надіслати",
            "відправити",
            "надіслати повідомлення",
            "опублікувати",
            "відповісти",
            "коментувати",
            "залишити коментар",
        ],
        sharing: &[
            "поділитися",
            "запросити",
            "надати доступ",
            "відкрити доступ",
            "зробити публічним",
            "усі хто має посилання",
            "створити посилання",
            "змінити роль",
            "додати учасника",
            "передати право власності",
        ],
        money_verbs: &[
            "продати",
            "обміняти",
            "поповнити",
            "надіслати",
            "сплатити",
            "оплатити",
            "переказати",
            "підписатися",
            "оформити підписку",
            "забронювати",
            "підтвердити",
            "замовити",
            "купити",
            "задонатити",
            "підтримати",
        ],
    },
    // Turkish: `öde*` would be `ödeme` (`Ödemeye geç` goes to the step that pays), `sil*`
    // `silikon`, `gönder*` `gönderi` (a post, the noun); `sat` alone is also `Sat` (Saturday)
    // beside a fare.
    Language {
        name: "Turkish",
        paying: &[
            "öde",
            "şimdi öde",
            "hemen öde",
            "ödeme yap",
            "ödemeyi onayla",
            "ödemeyi tamamla",
            "satın al",
            "şimdi satın al",
            "hemen al",
            "sipariş ver",
            "siparişi onayla",
            "siparişi tamamla",
            "para gönder",
            "havale yap",
            "eft yap",
            "bağış yap",
            "teklif ver",
        ],
        deleting: &[
            "sil",
            "silin",
            "kalıcı olarak sil",
            "hesabı kapat",
            "hesabımı kapat",
            "hesabı devre dışı bırak",
            "erişimi iptal et",
            "erişimi kaldır",
            "çöp kutusunu boşalt",
            "çöpü boşalt",
            "çöp kutusuna taşı",
            "yok et",
        ],
        secret_nouns: &[
            "şifre*",
            "parola",
            "parolayı",
            "parolanızı",
            "pin kodu",
            "e posta adresi",
            "e posta adresini",
            "e posta adresinizi",
        ],
        secret_changes: &["değiştir*", "güncelle", "sıfırla*", "belirle", "oluştur", "yeni", "kaydet"],
        secrets: &[
            "iki faktörlü",
            "iki adımlı",
            "2fa",
            "güvenlik anahtarı",
            "api anahtarı",
            "erişim belirteci",
            "token oluştur",
            "kurtarma kodları",
            "yedek kodlar",
            "yetkilendir",
        ],
        not_data: &[
            "filtre*",
            "arama*",
            "seçim*",
            "sıralama*",
            "sepet*",
            "favori*",
            "istek listesi",
            "istek listesinden",
        ],
        sending: &[
            "gönder",
            "gönderin",
            "mesaj gönder",
            "yayınla",
            "yanıtla",
            "cevapla",
            "yorum yap",
            "yorum gönder",
        ],
        sharing: &[
            "paylaş",
            "herkese açık",
            "herkese açık yap",
            "davet et",
            "bağlantı oluştur",
            "bağlantıya sahip olan herkes",
            "rolü değiştir",
            "üye ekle",
            "sahipliği aktar",
            "erişim ver",
        ],
        money_verbs: &[
            "bozdur",
            "dönüştür",
            "bakiye yükle",
            "para yükle",
            "gönder",
            "öde",
            "abone ol",
            "yükselt",
            "aboneliği yenile",
            "rezervasyon yap",
            "onayla",
            "satın al",
            "sipariş ver",
            "bağış yap",
            "destekle",
        ],
    },
    // Korean, by words: `결제` alone is also `결제 수단` (a payment method), and `결제하*`,
    // `구매하*`, `주문하*` would be `결제하신`, `구매하신`, `주문하신` (what one paid for, in an
    // order history); `선택` is no look-alike (`선택 삭제` deletes what is selected).
    Language {
        name: "Korean",
        paying: &[
            "결제하기",
            "지금 결제",
            "바로 결제",
            "구매하기",
            "바로 구매",
            "바로구매",
            "지금 구매",
            "주문하기",
            "송금하기",
            "이체하기",
            "돈 보내기",
            "기부하기",
            "후원하기",
            "입찰하기",
        ],
        deleting: &[
            "삭제",
            "삭제하기",
            "삭제합니다",
            "영구 삭제",
            "영구적으로 삭제",
            "완전 삭제",
            "탈퇴",
            "탈퇴하기",
            "회원 탈퇴",
            "해지하기",
            "휴지통 비우기",
            "휴지통으로 이동",
            "액세스 취소",
            "권한 취소",
        ],
        secret_nouns: &["비밀번호*", "암호", "암호를", "pin 번호", "이메일 주소"],
        secret_changes: &["변경*", "재설정*", "새", "저장", "업데이트", "만들기", "수정"],
        secrets: &[
            "2단계 인증",
            "2단계인증",
            "이중 인증",
            "2fa",
            "보안 키",
            "api 키",
            "api키",
            "액세스 토큰",
            "토큰 생성",
            "복구 코드",
            "백업 코드",
            "앱 비밀번호",
        ],
        not_data: &["필터*", "검색*", "정렬*", "장바구니*", "찜*", "위시리스트*", "관심상품*"],
        sending: &[
            "보내기",
            "전송",
            "전송하기",
            "메시지 보내기",
            "게시",
            "게시하기",
            "발행",
            "발행하기",
            "답장",
            "답장하기",
            "답글 달기",
            "댓글 달기",
            "댓글 등록",
            "답글 등록",
        ],
        sharing: &[
            "공유",
            "공유하기",
            "링크 공유",
            "초대",
            "초대하기",
            "공개",
            "공개로 전환",
            "공개로 설정",
            "전체 공개",
            "링크가 있는 모든 사용자",
            "링크 만들기",
            "링크 생성",
            "역할 변경",
            "멤버 추가",
            "소유권 이전",
        ],
        money_verbs: &[
            "판매하기",
            "환전",
            "충전",
            "충전하기",
            "보내기",
            "송금",
            "구독",
            "구독하기",
            "업그레이드",
            "갱신",
            "예약",
            "예약하기",
            "후원",
            "기부",
        ],
    },
    // Swedish, Czech and Finnish delete with the word that also removes (`ta bort`,
    // `odstranit`, `poista`), as Polish does; what is only removed is in `not_data`. Czech
    // `převést` alone is also converting (`Převést do PDF`).
    Language {
        name: "Swedish",
        paying: &[
            "betala",
            "betala nu",
            "köp",
            "köp nu",
            "slutför köp",
            "slutför köpet",
            "genomför köp",
            "bekräfta köp",
            "bekräfta köpet",
            "lägg order",
            "beställ",
            "slutför beställning",
            "skicka beställning",
            "bekräfta beställning",
            "bekräfta betalning",
            "överför",
            "överföring",
            "skicka pengar",
            "donera",
            "lägg bud",
        ],
        deleting: &[
            "radera",
            "ta bort",
            "radera permanent",
            "ta bort permanent",
            "radera konto",
            "avsluta konto",
            "stäng konto",
            "återkalla",
            "återkalla åtkomst",
            "töm papperskorgen",
            "töm papperskorg",
            "flytta till papperskorgen",
        ],
        secret_nouns: &["lösenord*", "pinkod*", "e postadress", "e postadressen"],
        secret_changes: &["ändra", "byt", "byta", "återställ", "nytt", "ny", "spara", "uppdatera", "skapa"],
        secrets: &[
            "tvåfaktor*",
            "tvåstegsverifiering",
            "2fa",
            "säkerhetsnyckel*",
            "api nyckel",
            "api nyckeln",
            "åtkomsttoken",
            "skapa token",
            "återställningskoder",
            "reservkoder",
            "auktorisera",
        ],
        not_data: &[
            "filter",
            "filtret",
            "filtren",
            "sök",
            "sökning*",
            "markering*",
            "sortering",
            "varukorg*",
            "kundvagn*",
            "önskelista*",
        ],
        sending: &["skicka", "skicka meddelande", "publicera", "svara", "kommentera", "posta", "lägg upp"],
        sharing: &[
            "dela",
            "dela länk",
            "bjud in",
            "offentlig",
            "gör offentlig",
            "skapa länk",
            "alla som har länken",
            "ändra roll",
            "lägg till medlem",
            "överför ägarskap",
            "ge åtkomst",
        ],
        money_verbs: &[
            "sälj",
            "sälja",
            "växla",
            "fyll på",
            "sätt in",
            "skicka",
            "betala",
            "överför",
            "swisha",
            "prenumerera",
            "uppgradera",
            "förnya",
            "boka",
            "reservera",
            "hyr",
            "bekräfta",
            "köp",
            "beställ",
            "donera",
            "stöd",
        ],
    },
    Language {
        name: "Czech",
        paying: &[
            "objednávka zavazující k platbě",
            "objednat s povinností platby",
            "zaplatit",
            "zaplatit nyní",
            "koupit",
            "koupit nyní",
            "objednat",
            "dokončit objednávku",
            "odeslat objednávku",
            "potvrdit objednávku",
            "potvrdit platbu",
            "odeslat platbu",
            "převést peníze",
            "darovat",
            "přihodit",
        ],
        deleting: &[
            "smazat",
            "smažte",
            "smazat trvale",
            "trvale smazat",
            "odstranit",
            "trvale odstranit",
            "smazat účet",
            "zrušit účet",
            "deaktivovat účet",
            "odvolat",
            "odebrat přístup",
            "zrušit přístup",
            "vysypat koš",
            "vyprázdnit koš",
            "přesunout do koše",
            "zničit",
        ],
        secret_nouns: &["hesl*", "pin kód", "e mailovou adresu", "e mailová adresa"],
        secret_changes: &[
            "změnit",
            "změna",
            "změňte",
            "obnovit",
            "nastavit",
            "nové",
            "nový",
            "uložit",
            "aktualizovat",
            "vytvořit",
        ],
        secrets: &[
            "dvoufázov*",
            "dvoufaktorov*",
            "2fa",
            "bezpečnostní klíč",
            "api klíč",
            "přístupový token",
            "vytvořit token",
            "záložní kódy",
            "kódy pro obnovení",
            "autorizovat",
        ],
        not_data: &[
            "filtr*",
            "hledání",
            "vyhledávání",
            "výběr",
            "řazení",
            "košík*",
            "oblíben*",
            "seznam přání",
        ],
        sending: &[
            "odeslat",
            "poslat",
            "odeslat zprávu",
            "publikovat",
            "zveřejnit",
            "odpovědět",
            "komentovat",
            "přidat komentář",
        ],
        sharing: &[
            "sdílet",
            "pozvat",
            "veřejné",
            "veřejný",
            "nastavit jako veřejné",
            "vytvořit odkaz",
            "kdokoli s odkazem",
            "změnit roli",
            "přidat člena",
            "převést vlastnictví",
            "udělit přístup",
        ],
        money_verbs: &[
            "prodat",
            "směnit",
            "dobít",
            "poslat",
            "odeslat",
            "zaplatit",
            "převést",
            "předplatit",
            "upgradovat",
            "prodloužit",
            "rezervovat",
            "potvrdit",
            "objednat",
            "koupit",
            "darovat",
            "přispět",
            "podpořit",
        ],
    },
    // Indonesian: `keranjang sampah` is the recycle bin, so only the shopping basket's phrases
    // are no data; `komentar` alone is also `Komentar (3)`.
    Language {
        name: "Indonesian",
        paying: &[
            "bayar",
            "bayar sekarang",
            "beli",
            "beli sekarang",
            "beli langsung",
            "buat pesanan",
            "pesan sekarang",
            "konfirmasi pesanan",
            "konfirmasi pembayaran",
            "lakukan pembayaran",
            "kirim uang",
            "transfer sekarang",
            "donasi",
            "donasi sekarang",
        ],
        deleting: &[
            "hapus",
            "hapus permanen",
            "hapus selamanya",
            "hapus akun",
            "tutup akun",
            "nonaktifkan akun",
            "cabut",
            "cabut akses",
            "kosongkan sampah",
            "kosongkan tempat sampah",
            "kosongkan keranjang sampah",
            "pindahkan ke sampah",
        ],
        secret_nouns: &["kata sandi", "sandi", "alamat email"],
        secret_changes: &[
            "ubah",
            "ganti",
            "atur ulang",
            "reset",
            "atur",
            "buat",
            "baru",
            "simpan",
            "perbarui",
        ],
        secrets: &[
            "verifikasi dua langkah",
            "autentikasi dua faktor",
            "2fa",
            "kunci keamanan",
            "kunci api",
            "token akses",
            "buat token",
            "kode pemulihan",
            "kode cadangan",
            "otorisasi",
        ],
        not_data: &[
            "filter",
            "pencarian",
            "pilihan",
            "urutkan",
            "keranjang belanja",
            "dari keranjang",
            "ke keranjang",
            "daftar keinginan",
            "favorit",
        ],
        sending: &[
            "kirim",
            "kirimkan",
            "kirim pesan",
            "terbitkan",
            "publikasikan",
            "balas",
            "kirim komentar",
            "tambah komentar",
            "beri komentar",
        ],
        sharing: &[
            "bagikan",
            "undang",
            "publik",
            "jadikan publik",
            "buat tautan",
            "siapa saja yang memiliki link",
            "ubah peran",
            "tambah anggota",
            "tambahkan anggota",
            "transfer kepemilikan",
            "alihkan kepemilikan",
            "berikan akses",
        ],
        money_verbs: &[
            "jual",
            "tukar",
            "isi saldo",
            "top up",
            "kirim",
            "bayar",
            "transfer",
            "berlangganan",
            "upgrade",
            "perpanjang",
            "pesan",
            "sewa",
            "konfirmasi",
            "beli",
            "donasi",
            "dukung",
            "ajukan penawaran",
        ],
    },
    // Vietnamese, by syllables: `đăng` alone is also `đăng nhập` (sign in) and `đăng ký`
    // (sign up), `mua` alone `Tiếp tục mua sắm` (continue shopping), `chuyển khoản` alone a
    // way to pay (a choice), `thanh toán` alone the step that pays.
    Language {
        name: "Vietnamese",
        paying: &[
            "thanh toán ngay",
            "xác nhận thanh toán",
            "mua ngay",
            "đặt hàng",
            "đặt mua",
            "xác nhận đặt hàng",
            "chuyển tiền",
            "xác nhận chuyển khoản",
            "quyên góp",
        ],
        deleting: &[
            "xóa",
            "xoá",
            "xóa vĩnh viễn",
            "xoá vĩnh viễn",
            "xóa tài khoản",
            "đóng tài khoản",
            "vô hiệu hóa tài khoản",
            "thu hồi",
            "thu hồi quyền truy cập",
            "dọn sạch thùng rác",
            "làm trống thùng rác",
            "chuyển vào thùng rác",
        ],
        secret_nouns: &["mật khẩu", "mã pin", "địa chỉ email"],
        secret_changes: &["đổi", "thay đổi", "đặt lại", "cập nhật", "mới", "lưu", "tạo", "thiết lập"],
        secrets: &[
            "xác minh 2 bước",
            "xác minh hai bước",
            "xác thực hai yếu tố",
            "xác thực 2 yếu tố",
            "2fa",
            "khóa bảo mật",
            "khóa api",
            "mã thông báo truy cập",
            "tạo mã thông báo",
            "mã khôi phục",
            "mã dự phòng",
            "ủy quyền",
        ],
        not_data: &[
            "bộ lọc",
            "tìm kiếm",
            "lựa chọn",
            "sắp xếp",
            "giỏ hàng",
            "yêu thích",
            "danh sách yêu thích",
        ],
        sending: &[
            "gửi",
            "gửi tin nhắn",
            "đăng bài",
            "xuất bản",
            "trả lời",
            "phản hồi",
            "bình luận",
            "gửi bình luận",
            "gửi đánh giá",
        ],
        sharing: &[
            "chia sẻ",
            "mời",
            "công khai",
            "tạo liên kết",
            "bất kỳ ai có đường liên kết",
            "thay đổi vai trò",
            "thêm thành viên",
            "chuyển quyền sở hữu",
            "cấp quyền truy cập",
        ],
        money_verbs: &[
            "bán",
            "nạp tiền",
            "gửi",
            "đăng ký",
            "nâng cấp",
            "gia hạn",
            "đặt phòng",
            "thuê",
            "xác nhận",
            "ủng hộ",
            "quyên góp",
        ],
    },
    // Arabic: `عام` (public) is also `General`, `تعليق` (comment) also suspending, `شحن` (top
    // up) also shipping, `مسح` (erase) also clearing a search; the article and prepositions
    // are written onto the word, so the look-alikes are listed with them.
    Language {
        name: "Arabic",
        paying: &[
            "ادفع",
            "ادفع الآن",
            "الدفع الآن",
            "اشتر الآن",
            "اشتري الآن",
            "شراء الآن",
            "اطلب الآن",
            "تأكيد الطلب",
            "تاكيد الطلب",
            "تأكيد الدفع",
            "تأكيد الشراء",
            "إرسال الأموال",
            "تحويل الأموال",
            "تحويل الأموال الآن",
            "تبرع",
            "تبرع الآن",
        ],
        deleting: &[
            "حذف",
            "احذف",
            "حذف نهائي",
            "حذف نهائيا",
            "حذف الحساب",
            "إغلاق الحساب",
            "اغلاق الحساب",
            "إلغاء تنشيط الحساب",
            "إبطال",
            "إلغاء الوصول",
            "إفراغ سلة المهملات",
            "تفريغ سلة المهملات",
            "نقل إلى سلة المهملات",
        ],
        secret_nouns: &["كلمة المرور", "كلمة السر", "البريد الإلكتروني", "البريد الالكتروني"],
        secret_changes: &[
            "تغيير",
            "تعديل",
            "إعادة تعيين",
            "اعادة تعيين",
            "تعيين",
            "جديدة",
            "حفظ",
            "تحديث",
            "إنشاء",
        ],
        secrets: &[
            "المصادقة الثنائية",
            "التحقق بخطوتين",
            "2fa",
            "مفتاح الأمان",
            "مفتاح api",
            "رمز الوصول",
            "رموز الاسترداد",
            "الرموز الاحتياطية",
            "رموز احتياطية",
            "تفويض",
        ],
        not_data: &[
            "فلتر",
            "الفلتر",
            "الفلاتر",
            "التصفية",
            "تصفية",
            "البحث",
            "بحث",
            "التحديد",
            "الترتيب",
            "ترتيب",
            "سلة التسوق",
            "السلة",
            "للسلة",
            "عربة التسوق",
            "قائمة الأمنيات",
            "المفضلة",
        ],
        sending: &[
            "إرسال",
            "ارسال",
            "أرسل",
            "ارسل",
            "إرسال رسالة",
            "نشر",
            "انشر",
            "رد",
            "إضافة تعليق",
            "نشر تعليق",
        ],
        sharing: &[
            "مشاركة",
            "شارك",
            "دعوة",
            "لديه الرابط",
            "إنشاء رابط",
            "تغيير الدور",
            "إضافة عضو",
            "نقل الملكية",
            "منح حق الوصول",
            "منح الوصول",
        ],
        money_verbs: &[
            "بيع",
            "إرسال",
            "ادفع",
            "دفع",
            "تحويل",
            "اشترك",
            "اشتراك",
            "ترقية",
            "تجديد",
            "احجز",
            "حجز",
            "تأكيد",
            "شراء",
            "اشتر",
            "اطلب",
            "تبرع",
        ],
    },
    // Greek: a label written in capitals loses its accents (`ΔΙΑΓΡΑΦΗ`), so the commonest
    // buttons are listed without them too; `πληρωμή` alone is also `Συνέχεια στην πληρωμή`.
    Language {
        name: "Greek",
        paying: &[
            "παραγγελία με υποχρέωση πληρωμής",
            "πλήρωσε",
            "πληρώστε",
            "πλήρωσε τώρα",
            "πληρωμή τώρα",
            "επιβεβαίωση πληρωμής",
            "αγορά",
            "αγορα",
            "αγορά τώρα",
            "αγόρασε",
            "αγοράστε",
            "αγόρασε τώρα",
            "υποβολή παραγγελίας",
            "επιβεβαίωση παραγγελίας",
            "αποστολή χρημάτων",
            "μεταφορά χρημάτων",
            "κάνε δωρεά",
            "κάντε δωρεά",
        ],
        deleting: &[
            "διαγραφή",
            "διαγραφη",
            "διάγραψε",
            "διαγράψτε",
            "οριστική διαγραφή",
            "διαγραφή λογαριασμού",
            "κλείσιμο λογαριασμού",
            "απενεργοποίηση λογαριασμού",
            "ανάκληση",
            "ανάκληση πρόσβασης",
            "άδειασμα κάδου",
            "μετακίνηση στον κάδο",
        ],
        secret_nouns: &[
            "κωδικός πρόσβασης",
            "κωδικό πρόσβασης",
            "κωδικού πρόσβασης",
            "κωδικού",
            "συνθηματικό",
            "κωδικός pin",
            "διεύθυνση email",
        ],
        secret_changes: &[
            "αλλαγή",
            "αλλάξτε",
            "επαναφορά",
            "ορισμός",
            "νέος",
            "νέο",
            "αποθήκευση",
            "ενημέρωση",
            "δημιουργία",
        ],
        secrets: &[
            "δύο παραγόντων",
            "επαλήθευση σε δύο βήματα",
            "2fa",
            "κλειδί ασφαλείας",
            "κλειδί api",
            "κωδικοί ανάκτησης",
            "εφεδρικοί κωδικοί",
            "εξουσιοδότηση",
        ],
        not_data: &[
            "φίλτρο",
            "φίλτρα",
            "φίλτρων",
            "αναζήτηση",
            "αναζήτησης",
            "επιλογή",
            "επιλογής",
            "ταξινόμηση",
            "καλάθι",
            "καλαθιού",
            "λίστα επιθυμιών",
            "αγαπημένα",
        ],
        sending: &[
            "αποστολή",
            "αποστολη",
            "στείλε",
            "στείλτε",
            "αποστολή μηνύματος",
            "δημοσίευση",
            "δημοσίευσε",
            "απάντηση",
            "σχολιάστε",
            "προσθήκη σχολίου",
        ],
        sharing: &[
            "κοινοποίηση",
            "κοινοποιηση",
            "κοινή χρήση",
            "πρόσκληση",
            "προσκαλέστε",
            "δημόσιο",
            "δημόσια",
            "δημιουργία συνδέσμου",
            "οποιοσδήποτε έχει τον σύνδεσμο",
            "αλλαγή ρόλου",
            "προσθήκη μέλους",
            "μεταβίβαση κυριότητας",
            "παραχώρηση πρόσβασης",
        ],
        money_verbs: &[
            "πώληση",
            "πούλησε",
            "ανταλλαγή",
            "μετατροπή",
            "πλήρωσε",
            "πληρώστε",
            "συνδρομή",
            "αναβάθμιση",
            "ανανέωση",
            "κράτηση",
            "επιβεβαίωση",
            "αγορά",
            "παραγγελία",
            "δωρεά",
            "υποστήριξη",
        ],
    },
    // Romanian: `ș` and `ț` are also written with a cedilla (`ş`, `ţ`); `coșul de gunoi` is
    // the trash, so only the cart's phrases are no data.
    Language {
        name: "Romanian",
        paying: &[
            "comandă cu obligație de plată",
            "plătește",
            "plăteşte",
            "plătește acum",
            "plătiți",
            "cumpără",
            "cumpără acum",
            "plasează comanda",
            "trimite comanda",
            "confirmă comanda",
            "comandă acum",
            "confirmă plata",
            "efectuează plata",
            "transferă",
            "trimite bani",
            "donează",
            "licitează",
        ],
        deleting: &[
            "șterge",
            "şterge",
            "ștergeți",
            "şterge definitiv",
            "șterge definitiv",
            "șterge contul",
            "închide contul",
            "dezactivează contul",
            "revocă",
            "revocă accesul",
            "golește coșul de gunoi",
            "goleşte coşul de gunoi",
            "mută în coșul de gunoi",
        ],
        secret_nouns: &["parola", "parolă", "parolei", "codul pin", "cod pin", "adresa de email"],
        secret_changes: &[
            "schimbă",
            "schimbare",
            "schimbarea",
            "modifică",
            "resetează",
            "resetare",
            "setează",
            "nouă",
            "salvează",
            "actualizează",
            "creează",
        ],
        secrets: &[
            "autentificare în doi pași",
            "verificare în doi pași",
            "doi factori",
            "2fa",
            "cheie de securitate",
            "cheie api",
            "cheia api",
            "token de acces",
            "generează token",
            "coduri de recuperare",
            "coduri de rezervă",
            "autorizează",
        ],
        not_data: &[
            "filtru",
            "filtrul",
            "filtre",
            "filtrele",
            "căutare",
            "căutarea",
            "selecția",
            "selecție",
            "sortare",
            "din coș",
            "din coş",
            "în coș",
            "coșul de cumpărături",
            "coşul de cumpărături",
            "favorite",
            "lista de dorințe",
        ],
        sending: &[
            "trimite",
            "trimite mesajul",
            "trimite mesaj",
            "publică",
            "răspunde",
            "comentează",
            "postează",
            "adaugă un comentariu",
        ],
        sharing: &[
            "distribuie",
            "partajează",
            "invită",
            "public",
            "fă public",
            "creează link",
            "oricine are linkul",
            "schimbă rolul",
            "adaugă membru",
            "transferă dreptul de proprietate",
            "acordă acces",
        ],
        money_verbs: &[
            "vinde",
            "convertește",
            "reîncarcă",
            "alimentează",
            "trimite",
            "plătește",
            "transferă",
            "abonează",
            "reînnoiește",
            "rezervă",
            "confirmă",
            "cumpără",
            "comandă",
            "donează",
            "susține",
        ],
    },
    // Finnish: `maksu*` would be `maksutapa` (a way to pay), `lataa` alone is downloading,
    // `uusi` also new, `kumoa` also undo; the inflected look-alikes are stems.
    Language {
        name: "Finnish",
        paying: &[
            "tilaus johon liittyy maksuvelvoite",
            "maksa",
            "maksa nyt",
            "osta",
            "osta nyt",
            "vahvista tilaus",
            "tee tilaus",
            "lähetä tilaus",
            "vahvista maksu",
            "siirrä rahaa",
            "lahjoita",
        ],
        deleting: &[
            "poista",
            "poista pysyvästi",
            "poista tili",
            "sulje tili",
            "peruuta käyttöoikeus",
            "tyhjennä roskakori",
            "siirrä roskakoriin",
            "tuhoa",
        ],
        secret_nouns: &["salasan*", "pin koodi", "pin koodin", "pinkoodi*", "sähköpostiosoit*"],
        secret_changes: &[
            "vaihda",
            "vaihto",
            "muuta",
            "muokkaa",
            "nollaa",
            "palauta",
            "aseta",
            "uusi",
            "tallenna",
            "päivitä",
            "luo",
        ],
        secrets: &[
            "kaksivaihei*",
            "kaksiosai*",
            "2fa",
            "suojausavain*",
            "api avain",
            "api avaimen",
            "api avaimet",
            "palautuskoodi*",
            "varakoodi*",
            "valtuuta",
        ],
        not_data: &["suodat*", "haku*", "valin*", "lajittel*", "ostoskori*", "toivelista*", "suosik*"],
        sending: &["lähetä", "lähetä viesti", "julkaise", "vastaa", "kommentoi", "lisää kommentti"],
        sharing: &[
            "jaa",
            "kutsu",
            "julkinen",
            "tee julkiseksi",
            "luo linkki",
            "kaikki joilla on linkki",
            "vaihda rooli",
            "muuta roolia",
            "lisää jäsen",
            "siirrä omistajuus",
            "anna käyttöoikeus",
        ],
        money_verbs: &[
            "myy",
            "muunna",
            "lataa saldoa",
            "lähetä",
            "maksa",
            "siirrä",
            "tilaa",
            "varaa",
            "vahvista",
            "osta",
            "lahjoita",
            "tue",
        ],
    },
    // Thai, anywhere in the label (no spaces between words). Left out as too short or inside
    // harmless words: `ลบ` (delete; inside `ผลบอล`, `ผลบวก`, `หลบ`), `ส่ง` (send; `จัดส่ง` and
    // `ส่งฟรี` are shipping, and without its tone mark it is `สง` of `สงวน`, `ส่งเสริม`),
    // `ซื้อ` (buy; `เลือกซื้อ` is browsing, `ซื้อขั้นต่ำ ฿99` a voucher's minimum), `ขาย` (sell;
    // `ขายแล้ว 1.2พัน` on every Shopee tile next to its price), `จ่าย` (`ค่าใช้จ่าย`, expenses,
    // so `จ่ายเลย` is in `ไม่มีค่าใช้จ่ายเลย`), `ยุติ` (terminate; `ยุติธรรม`), `เชิญ` (invite;
    // `ยอมรับคำเชิญ` accepts one), `อนุญาต` (authorize; `อนุญาตคุกกี้ทั้งหมด`), `จอง`, `เช่า`,
    // `สมัคร` (`ยกเลิกการจองฟรี`, `ให้เช่า` and `ผู้สมัคร` on listings with prices). `ชำระเงิน`
    // alone is the checkout (Shopee's and Lazada's cart button, Shopify's `Checkout`) as well as
    // the pay step, as `결제` and `thanh toán` are, and `สั่งซื้อ` alone is inside `คำสั่งซื้อ`
    // (an order, `คำสั่งซื้อของฉัน`): their paying phrases are listed. `ปิด` (close, turn off)
    // is inside `เปิด` (open, turn on): `ปิดบัญชี` would be `เปิดบัญชี` (open an account) and
    // `ปิดใช้งานบัญชี` `เปิดใช้งานบัญชี`, so only `การปิด…` and `ขอปิด…` are listed. `ลบออก`
    // (remove) is left out as English leaves `remove`; `เลือก` (selection) is no look-alike,
    // as `선택`: `ลบที่เลือก` deletes what is selected. `ซื้อเลย` is also in `เลือกซื้อเลย`
    // (shop now) and `เผยแพร่` in `ยกเลิกการเผยแพร่` (unpublish): kept for `Buy now` and `Publish`.
    Language {
        name: "Thai",
        paying: &[
            "ชำระเงินเลย",
            "ชำระเงินทันที",
            "ชำระเงินตอนนี้",
            "ชำระเลย",
            "ชำระทันที",
            "ยืนยันการชำระ",
            "ยืนยันชำระ",
            "จ่ายเงินเลย",
            "ยืนยันการจ่าย",
            "ซื้อเลย",
            "ซื้อทันที",
            "ซื้อตอนนี้",
            "ยืนยันการซื้อ",
            "สั่งซื้อเลย",
            "สั่งซื้อทันที",
            "ยืนยันการสั่งซื้อ",
            "ยืนยันคำสั่งซื้อ",
            "ทำการสั่งซื้อ",
            // Shopee's `Place order` on its checkout page.
            "สั่งสินค้า",
            "โอนเงิน",
            "ยืนยันการโอนเงิน",
            "ส่งเงิน",
            "บริจาคเลย",
            "บริจาคเงิน",
            "ร่วมบริจาค",
            "ประมูลเลย",
            "ยืนยันการประมูล",
        ],
        deleting: &[
            "ลบบัญชี",
            "ลบถาวร",
            "ลบอย่างถาวร",
            "ลบออกถาวร",
            "ลบทิ้ง",
            "ลบเลย",
            "ลบทั้งหมด",
            "ลบข้อมูล",
            "ลบข้อความ",
            "ลบแชท",
            "ลบไฟล์",
            "ลบโฟลเดอร์",
            "ลบรูป",
            "ลบวิดีโอ",
            "ลบโพสต์",
            "ลบความคิดเห็น",
            "ลบรายการ",
            "ลบอีเมล",
            "ลบผู้ติดต่อ",
            "ลบกลุ่ม",
            "ลบเอกสาร",
            "ลบโปรเจกต์",
            "ลบโปรเจ็กต์",
            "ลบโครงการ",
            "ลบฐานข้อมูล",
            "ลบที่เก็บ",
            "ลบเซิร์ฟเวอร์",
            "ลบอินสแตนซ์",
            "ยืนยันการลบ",
            "ใช่ ลบ",
            "ย้ายไปที่ถังขยะ",
            "ย้ายไปถังขยะ",
            "ย้ายไปยังถังขยะ",
            "ทิ้งลงถังขยะ",
            "ล้างถังขยะ",
            "ล้างถังรีไซเคิล",
            "เทถังขยะ",
            "การปิดบัญชี",
            "ขอปิดบัญชี",
            "การปิดใช้งานบัญชี",
            "เพิกถอน",
            "นำสิทธิ์การเข้าถึงออก",
            "นำสิทธิ์เข้าถึงออก",
            "ยกเลิกการเข้าถึง",
            "ทำลาย",
        ],
        secret_nouns: &["รหัสผ่าน", "พาสเวิร์ด", "รหัส pin", "รหัสพิน", "ที่อยู่อีเมล"],
        // `ตั้ง` (set) alone is inside `ตั้งค่า` (settings): `ตั้งรหัส` is listed.
        secret_changes: &[
            "เปลี่ยน",
            "ตั้งรหัส",
            "ตั้งใหม่",
            "รีเซ็ต",
            "กำหนด",
            "ใหม่",
            "บันทึก",
            "สร้าง",
            "แก้ไข",
            "อัปเดต",
            "อัพเดต",
            "อัพเดท",
        ],
        secrets: &[
            "แบบ 2 ขั้นตอน",
            "แบบสองขั้นตอน",
            "สองปัจจัย",
            "2 ปัจจัย",
            "หลายปัจจัย",
            "2fa",
            "คีย์ความปลอดภัย",
            "คีย์ api",
            "คีย์ ssh",
            "คีย์ลับ",
            "คีย์การเข้าถึง",
            "คีย์การปรับใช้",
            "สร้างคีย์",
            "โทเค็นการเข้าถึง",
            "โทเค็นเพื่อการเข้าถึง",
            "สร้างโทเค็น",
            "สร้างโทเคน",
            "รหัสสำรอง",
            "รหัสกู้คืน",
            "รหัสการกู้คืน",
            "พาสคีย์",
            "รหัสผ่านสำหรับแอป",
            "รหัสผ่านของแอป",
            "อีเมลสำรอง",
            "อีเมลกู้คืน",
            "อีเมลสำหรับการกู้คืน",
            "โทรศัพท์สำหรับการกู้คืน",
            "ข้อมูลลับของไคลเอ็นต์",
        ],
        not_data: &[
            "ตัวกรอง",
            "การกรอง",
            "ค้นหา",
            "เรียงลำดับ",
            "การจัดเรียง",
            "เรียงตาม",
            "รถเข็น",
            "ตะกร้า",
            "รายการโปรด",
            "รายการที่ชอบ",
            "สินค้าที่ถูกใจ",
            "รายการที่อยากได้",
            "การจัดรูปแบบ",
            "ไฮไลต์",
        ],
        sending: &[
            "ส่งข้อความ",
            "ส่งเลย",
            "ส่งตอนนี้",
            "ส่งอีเมล",
            "ส่งคำตอบ",
            "ส่งความคิดเห็น",
            "ส่งรีวิว",
            "โพสต์",
            "เผยแพร่",
            "ตอบกลับ",
            "แสดงความคิดเห็น",
            "เพิ่มความคิดเห็น",
            "ทวีต",
        ],
        sharing: &[
            "แชร์",
            "แบ่งปัน",
            "ส่งคำเชิญ",
            "เชิญเพื่อน",
            "เชิญสมาชิก",
            "เชิญผู้ใช้",
            "เชิญผู้คน",
            "เชิญเข้าร่วม",
            "เชิญเข้ากลุ่ม",
            "เพิ่มสมาชิก",
            "เพิ่มผู้ทำงานร่วมกัน",
            "สาธารณะ",
            "ทำให้เป็นสาธารณะ",
            "เปลี่ยนเป็นสาธารณะ",
            "ทุกคนที่มีลิงก์",
            "สร้างลิงก์",
            "เปลี่ยนการมองเห็น",
            "เปลี่ยนระดับการมองเห็น",
            "เปลี่ยนบทบาท",
            "ตั้งเป็นผู้ดูแล",
            "ตั้งเป็นแอดมิน",
            "โอนความเป็นเจ้าของ",
            "โอนการเป็นเจ้าของ",
            "ให้สิทธิ์เข้าถึง",
            "ให้สิทธิ์การเข้าถึง",
            "เผยแพร่ทางเว็บ",
        ],
        money_verbs: &[
            "จ่ายเงิน",
            "จ่ายบิล",
            "ชำระบิล",
            "โอน",
            "เติมเงิน",
            "แลกเงิน",
            "แปลงสกุลเงิน",
            "ขายเลย",
            "ยืนยันการขาย",
            "สมัครสมาชิก",
            "สมัครแพ็กเกจ",
            "สมัครเลย",
            "อัปเกรด",
            "อัพเกรด",
            "ต่ออายุ",
            "จองเลย",
            "จองตอนนี้",
            "ยืนยันการจอง",
            "เช่าเลย",
            "ยืนยัน",
            "บริจาค",
            "ให้ทิป",
            "เสนอราคา",
        ],
    },
    // Persian, by words. The zero-width non-joiner (U+200C, written `\u{200c}`) cuts a word as a
    // space does, so `اشتراک‌گذاری` and `اشتراک گذاری` are the same entry, and each is listed
    // once; a spelling written without either (`اشتراکگذاری`, `بروزرسانی`) is its own word and is
    // listed where sites write it so. A `*` stem must not hold a ZWNJ (a label's words never
    // do). Arabic-keyboard letters (`ي` for `ی`, `ك` for `ک`) are not folded: the commonest
    // paying and deleting phrases are also listed with them. `حذف` (delete) and `ارسال` (send)
    // are the Arabic entry's words already. `پرداخت` alone is also the payment method
    // (`روش پرداخت`) and `ادامه پرداخت`: next to an amount only; `خرید` alone is in
    // `سبد خرید` (cart), `افزودن به سبد خرید` (add to cart) and `ادامه خرید` (continue
    // shopping), never listed alone, nor among the money verbs; `تسویه حساب` (WooCommerce's
    // checkout) pays nothing. `اشتراک` alone is a subscription, `عمومی` alone is `General`,
    // `دعوت` alone an invitation (`پذیرفتن دعوت`), `پاک کردن` alone clearing (`پاک کردن فیلترها`,
    // `پاک کردن فرم`), `انتقال` alone moving (`انتقال به پوشه`), `رمز` alone a one-time PIN
    // (`رمز پویا`) or `رمز ارز` (crypto), `ایمیل` alone as English leaves `email`. `ارسال` is
    // also shipping (`هزینه ارسال`, `روش ارسال`): those nouns are in `not_data`, which keeps
    // the Arabic `ارسال` from sending there. `انتخاب` (selection) is no look-alike:
    // `حذف انتخاب‌شده‌ها` deletes what is selected.
    Language {
        name: "Persian",
        paying: &[
            "پرداخت کنید",
            "پرداخت كنيد",
            "پرداخت کن",
            "بپرداز",
            "بپردازید",
            "بپردازيد",
            "پرداخت نهایی",
            "پرداخت نهايي",
            "تأیید پرداخت",
            "تایید پرداخت",
            "تأييد پرداخت",
            "تاييد پرداخت",
            "تأیید و پرداخت",
            "تایید و پرداخت",
            "تأييد و پرداخت",
            "تاييد و پرداخت",
            "ثبت سفارش",
            "ثبت نهایی سفارش",
            "سفارش دهید",
            "سفارش بده",
            "خرید کنید",
            "خريد كنيد",
            "بخر",
            "بخرید",
            "بخريد",
            "خرید فوری",
            "تأیید خرید",
            "تایید خرید",
            "تکمیل خرید",
            "تكميل خريد",
            "نهایی کردن خرید",
            "انتقال وجه",
            "تأیید و انتقال",
            "تایید و انتقال",
            "انتقال پایا",
            "انتقال ساتنا",
            "انتقال پول",
            "ارسال پول",
            "کارت به کارت",
            "كارت به كارت",
            "تسویه بدهی",
            "اهدا کنید",
            "کمک مالی کنید",
        ],
        deleting: &[
            "حذف دائمی",
            "حذف برای همیشه",
            "حذف کامل",
            "حذف حساب",
            "حذف حساب کاربری",
            "حذف حساب كاربري",
            "پاک کردن برای همیشه",
            "پاک کردن دائمی",
            "پاك كردن براي هميشه",
            "پاک کردن حساب",
            "پاک کردن تاریخچه",
            "پاک کردن گفتگو",
            "پاک کردن پیام",
            "بستن حساب",
            "غیرفعال کردن حساب",
            "غیرفعال\u{200c}سازی حساب",
            "غيرفعال كردن حساب",
            "لغو دسترسی",
            "ابطال",
            "باطل کردن",
            "خالی کردن سطل زباله",
            "خالي كردن سطل زباله",
            "تخلیه سطل زباله",
            "خالی کردن سطل بازیافت",
            "انتقال به سطل زباله",
            "نابود کردن",
        ],
        secret_nouns: &[
            "رمز عبور",
            "رمز ورود",
            "کلمه عبور",
            "گذرواژه",
            "گذر واژه",
            "پسورد",
            "رمز دوم",
            "رمز اول",
            "رمز اینترنتی",
            "رمز کارت",
            "کد پین",
            "پین کد",
            "آدرس ایمیل",
            "نشانی ایمیل",
        ],
        secret_changes: &[
            "تغییر",
            "عوض",
            "بازنشانی",
            "بازیابی",
            "تنظیم",
            "تعیین",
            "جدید",
            "ذخیره",
            "به\u{200c}روزرسانی",
            "به\u{200c}روز\u{200c}رسانی",
            "بروزرسانی",
            "ایجاد",
            "ساخت",
            "ویرایش",
            "انتخاب",
        ],
        secrets: &[
            "دو مرحله\u{200c}ای",
            "دومرحله\u{200c}ای",
            "۲ مرحله\u{200c}ای",
            "2 مرحله\u{200c}ای",
            "دو عاملی",
            "دوعاملی",
            "چند عاملی",
            "چندعاملی",
            "2fa",
            "کلید امنیتی",
            "کلید api",
            "کلید دسترسی",
            "کلید خصوصی",
            "کلید مخفی",
            "کلید ssh",
            "کلید عبور",
            "توکن دسترسی",
            "ایجاد توکن",
            "ساخت توکن",
            "توکن جدید",
            "کدهای بازیابی",
            "کد\u{200c}های بازیابی",
            "کدهای پشتیبان",
            "کد\u{200c}های پشتیبان",
            "گذرواژه برنامه",
            "رمز عبور برنامه",
            "ایمیل بازیابی",
            "شماره تلفن بازیابی",
            // `رمز` alone is left out (see above); its change is named.
            "تغییر رمز",
            "بازنشانی رمز",
            "تنظیم رمز",
        ],
        not_data: &[
            "فیلتر*",
            "فيلتر*",
            "جستجو*",
            "جست\u{200c}وجو",
            "جست\u{200c}وجوی",
            "مرتب\u{200c}سازی",
            "مرتبسازی",
            "سبد*",
            "علاقه\u{200c}مندی",
            "علاقمندی*",
            "علاقهمندی*",
            "لیست آرزو",
            "لیست آرزوها",
            "لیست مقایسه",
            "کد تخفیف",
            "قالب\u{200c}بندی",
            "قالببندی",
            "هایلایت",
            // Shipping, not sending (the Arabic entry's `ارسال`).
            "روش ارسال",
            "شیوه ارسال",
            "نحوه ارسال",
            "هزینه ارسال",
            "ارسال رایگان",
            "زمان ارسال",
            "مرحله ارسال",
            "اطلاعات ارسال",
            "ادامه به ارسال",
        ],
        sending: &[
            "ارسال پیام",
            "ارسال کنید",
            "ارسال کن",
            "بفرست",
            "بفرستید",
            "فرستادن",
            "ارسال نظر",
            "ثبت نظر",
            "افزودن نظر",
            "ثبت دیدگاه",
            "ارسال دیدگاه",
            "فرستادن دیدگاه",
            "افزودن دیدگاه",
            "ارسال پاسخ",
            "پاسخ",
            "پاسخ دادن",
            "پاسخ به همه",
            "انتشار",
            "منتشر کردن",
            "منتشر کنید",
            "منتشر شود",
            "توییت",
            "پست کردن",
            "ارسال پست",
        ],
        sharing: &[
            "اشتراک\u{200c}گذاری",
            "اشتراکگذاری",
            "اشتراک بگذارید",
            "اشتراک بگذار",
            "اشتراک گذاشتن",
            "هم\u{200c}رسانی",
            "همرسانی",
            "دعوت کنید",
            "دعوت کن",
            "دعوت کردن",
            "ارسال دعوت",
            "دعوت از اعضا",
            "دعوت از افراد",
            "دعوت از کاربران",
            "دعوت عضو",
            "افزودن عضو",
            "افزودن اعضا",
            "اضافه کردن عضو",
            "افزودن همکار",
            "افزودن مدیر",
            "ارتقا به مدیر",
            "عمومی کردن",
            "عمومی شود",
            "تبدیل به عمومی",
            "تغییر به عمومی",
            "قابل مشاهده برای همه",
            "هر کسی که پیوند",
            "هرکسی که پیوند",
            "هر کسی که لینک",
            "هرکسی که لینک",
            "ایجاد پیوند",
            "ایجاد لینک",
            "ساخت لینک",
            "تغییر نقش",
            "تغییر سطح دسترسی",
            "تغییر دسترسی",
            "انتقال مالکیت",
            "اعطای دسترسی",
            "دادن دسترسی",
        ],
        money_verbs: &[
            "پرداخت",
            "بفروش",
            "بفروشید",
            "تبدیل کنید",
            "شارژ کنید",
            "شارژ حساب",
            "شارژ کیف پول",
            "خرید شارژ",
            "افزایش موجودی",
            "افزایش اعتبار",
            "انتقال",
            "واریز کنید",
            "مشترک شوید",
            "مشترک شو",
            "خرید اشتراک",
            "تهیه اشتراک",
            "تمدید",
            "ارتقا",
            "ارتقاء",
            "رزرو",
            "رزرو کنید",
            "اجاره کنید",
            "تأیید",
            "تایید",
            "تأييد",
            "تاييد",
            "حمایت کنید",
            "اهدا",
            "کمک مالی",
            "انعام",
            "پیشنهاد قیمت",
            // Snapp's ride request, its fare beside it.
            "درخواست اسنپ",
        ],
    },
];

/// A word of the vocabulary (or a policy's) found in a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What it says the gesture does; `None` for a policy's word.
    pub kind: Option<Kind>,
    /// The entry as listed (`place order`, `Passwort` + `ändern` for a secret's change).
    pub words: String,
    /// The language it is listed under, or `your policy`.
    pub language: &'static str,
}

impl Found {
    pub fn describe(&self) -> String {
        match self.kind {
            Some(kind) => format!("\"{}\" ({}: {})", self.words, self.language, kind.describe()),
            None => format!("\"{}\" ({})", self.words, self.language),
        }
    }
}

/// A label made ready for matching: lower-cased, cut into words, and as one string (for
/// Chinese, Japanese and Thai).
pub struct Label {
    words: Vec<String>,
    /// The words joined by single spaces, with a space at both ends.
    spaced: String,
}

impl Label {
    pub fn new(text: &str) -> Self {
        // Turkish `İ` is `i`: lower-cased as Unicode says, its dot would cut the word (`İptal`).
        let lower = text.replace('İ', "i").to_lowercase();
        let words: Vec<String> = lower
            .split(|c: char| !c.is_alphanumeric() && !is_unspaced(c))
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        let spaced = format!(" {} ", words.join(" "));
        Label { words, spaced }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Whether an entry of the vocabulary is in the label (see the module's rules).
    pub fn has(&self, entry: &str) -> bool {
        if entry.chars().any(is_unspaced) {
            // Chinese, Japanese and Thai: anywhere, ignoring the spaces the label may have.
            let entry: String = entry.to_lowercase().chars().filter(|c| !c.is_whitespace()).collect();
            return self.spaced.replace(' ', "").contains(&entry);
        }
        let entry = Label::new(entry);
        !entry.is_empty() && self.spaced.contains(&entry.spaced)
    }

    /// Whether the label ends with an entry's words (`project[visibility_level]` ends with
    /// `visibility level`).
    pub fn ends_with(&self, entry: &str) -> bool {
        let entry = Label::new(entry);
        !entry.is_empty() && self.spaced.ends_with(&entry.spaced)
    }

    /// Whether an entry ending in `*` (a stem) begins one of the label's words.
    fn has_stem(&self, stem: &str) -> bool {
        let stem = stem.to_lowercase();
        self.words.iter().any(|w| w.starts_with(&stem))
    }

    fn has_entry(&self, entry: &str) -> bool {
        match entry.strip_suffix('*') {
            Some(stem) if !stem.contains(' ') => self.has_stem(stem),
            _ => self.has(entry),
        }
    }
}

/// Whether `c` is of a script written without spaces between words (Chinese, Japanese, Thai):
/// entries in it match anywhere in a label.
pub fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F   // Thai (its tone marks are no letters, yet inside words)
        | 0x3040..=0x30FF // hiragana, katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // compatibility ideographs
        | 0xFF66..=0xFF9F // half-width katakana
    )
}

/// Words a request's URL (or the operation its body names) carries when it writes, by kind,
/// besides the labels' (`POST /settings/tokens` makes one, `POST /transfers` moves money).
/// API paths are English whatever the page's language.
const URL_WORDS: &[(Kind, &[&str])] = &[
    (
        Kind::Paying,
        &[
            "transfers",
            "payments",
            "payment",
            "charges",
            "charge",
            "purchases",
            "purchase",
            "payouts",
            "payout",
            "withdrawals",
            "withdraw",
            "donations",
            "bids",
            "refund",
            "refunds",
            "create order",
            "order create",
            "place order",
            "complete checkout",
            "checkout complete",
            "change plan",
            "plan change",
            // Trading and wallets: `/accounts/1/sells`, `/recurring-buys`, `/topups/card`.
            "buys",
            "sells",
            "topups",
            "top up",
            "add funds",
            "addfunds",
            // One-word operations (AliExpress's `mtop.…checkout.placeorder`, `/checkout/buynow`)
            // and a bid on an offer (`/offers/133/bid`).
            "placeorder",
            "buynow",
            "bid",
            // An order placed (`/order/place`), a quote taken, a top-up, a paid plan started
            // (`/billing/subscribe`).
            "order place",
            "quote execute",
            "execute quote",
            "topup",
            "billing subscribe",
        ],
    ),
    (
        Kind::Deleting,
        &[
            "terminate",
            "unlink",
            "drop",
            "trash empty",
            "empty",
            // `/account/deletion-requests`, `AccountDeletionConfirmMutation`.
            "deletion",
            "force delete",
            // An order cancelled (`buyer_cancel_order`, `mtop.….order.cancel`), a message taken
            // back (LINE's `unsendMessage`), an account closed (`closeaccount.aspx`).
            "cancel order",
            "order cancel",
            "unsend",
            "closeaccount",
            "close account",
        ],
    ),
    (
        Kind::Secrets,
        &[
            "tokens",
            "keys",
            "credentials",
            "secrets",
            "authorize",
            "recovery",
            "webauthn",
            // A key or token made, turned or shown: Azure's `regenerateKey`, `listKeys`.
            "regenerate key",
            "regeneratekey",
            "list keys",
            "listkeys",
            "rotate key",
            "api token",
            "apppasswords",
            "app passwords",
            // The account's email, which resets its password (`/user/account/email/change`).
            "email change",
            "change email",
            "update email",
            // Two-factor turned on (`/proofs/EnableTfa`); a service account (its keys).
            "tfa",
            "serviceaccount",
            "service account",
        ],
    ),
    (
        Kind::Sending,
        &[
            "send",
            "publish",
            "reply",
            "statuses",
            "tweet",
            "tweets",
            "message post",
            "post message",
            // Instagram's direct messages (`/direct_v2/threads/broadcast/text/`), a newsletter's.
            "broadcast",
            "sendmail",
            "notes create",
            "create note",
            // Operations that write in the human's name (`CreateComment`, `addComment`,
            // `feedback.submit`, `dispute.create`, `ComposerStoryCreate`).
            "create comment",
            "add comment",
            "comment create",
            "create review",
            "review submit",
            "submit review",
            "feedback submit",
            "submit feedback",
            "dispute create",
            "create dispute",
            "story create",
            "create post",
            "create status update",
            "submit rating",
            "rating submit",
        ],
    ),
    (
        Kind::Sharing,
        &[
            "share",
            "shares",
            "shared",
            "sharing",
            "visibility",
            "invitations",
            "invitation",
            "invite",
            "invites",
            "collaborators",
            "collaboration",
            "collaborations",
            "memberships",
            "members",
            "add users",
            "add user",
            // A link for anyone (`/boards/4410/shareable_link`), mail forwarded elsewhere.
            "shareable",
            "forwarding",
            "permissions",
            "make public",
            "set public",
            "publicize",
            "role",
            "roles",
            // Bitwarden's Sends: a text or file anyone with the link reads.
            "sends",
        ],
    ),
];

/// Reactions: a write whose path names one is that reaction, whatever else its path says
/// (`POST /user/stars/dashboard/uid/pay-ovw` stars a dashboard whose id has `pay` in it).
const REACTIONS: &[&str] = &[
    "star",
    "stars",
    "starred",
    "unstar",
    "like",
    "likes",
    "unlike",
    "favourite",
    "favourites",
    "favorite",
    "favorites",
    "bookmark",
    "bookmarks",
    "react",
    "reaction",
    "reactions",
    "vote",
    "votes",
];

/// Whether a write's URL names a reaction (see [`REACTIONS`]).
pub fn is_reaction(url_words: &str) -> bool {
    let label = Label::new(url_words);
    REACTIONS.iter().any(|w| label.has(w))
}

/// Whether a text names something that is no data (a cart, a filter: the module's rule).
pub fn names_no_data(text: &str) -> bool {
    let label = Label::new(text);
    LANGUAGES.iter().any(|l| l.not_data.iter().any(|w| label.has_entry(w)))
}

/// What a write that only checks a price or a code is called in a path
/// (`/transfer/api/preview`, `/purchase/coupons/validation`): no payment.
const NOT_PAID: &[&str] = &[
    "preview",
    "estimate",
    "calculate",
    "validate",
    "validation",
    "coupon",
    "coupons",
    "voucher",
    "vouchers",
    "promo",
];

/// A one-time code, in the languages' words: sending one (`Send code`, `Skicka ny kod`,
/// `Kodu tekrar gönder`, `/otp/send`) sends it to the human, in no one's name.
const A_CODE: &[&str] = &[
    "code",
    "codes",
    "otp",
    "passcode",
    "verification code",
    "kod",
    "kodu",
    "koden",
    "kód",
    "kódot",
    "koodi",
    "koodin",
    "код",
    "коду",
    "кодом",
    "kode",
    "codul",
    "cod",
    "κωδικό",
    "κωδικός",
    "인증번호",
    "인증 코드",
    "mã",
    "mã otp",
    "رمز",
    "کد",
    "验证码",
    "驗證碼",
    "認証コード",
    "確認コード",
];

/// What taking something back is called in a path (`/deletion/restore`, `undeleteItem`): no
/// deletion, whatever else the path says.
const RESTORED: &[&str] = &["restore", "restores", "untrash", "undelete", "recover"];

/// What answers and reading are called, besides the reactions: a send or share that names one
/// of them is none (`POST /statuses/1/favourite`, `PUT /drafts/3`, `POST /messages/9/read`).
const NOT_SENT: &[&str] = &[
    "draft",
    "drafts",
    "preview",
    "unfavourite",
    "pin",
    "unpin",
    "mute",
    "unmute",
    "read",
    "seen",
    "typing",
    "presence",
    "translate",
    "spam",
];

/// What a `DELETE` may remove without deleting data: a sign-in (`DELETE /users/sign_out`), a
/// reaction, a follow, a draft, or anything the module's rule says is no data.
const LEAVING: &[&str] = &[
    "session",
    "sessions",
    "sign out",
    "signout",
    "logout",
    "log out",
    "follow",
    "following",
    "subscription",
    "subscriptions",
    "starred",
    "stars",
    "notification",
    "notifications",
    "dismiss",
];

/// Everything the built-in vocabulary and `extra` words (a policy's) find in `text`.
pub fn find(text: &str, extra: &[String]) -> Vec<Found> {
    find_with(text, extra, false, false)
}

/// [`find`] for a label with an amount of money on it: a verb that moves money is paying there
/// (`Send $25`, `Abonnieren – 9,99 €/Monat`).
pub fn find_priced(text: &str, extra: &[String], priced: bool) -> Vec<Found> {
    find_with(text, extra, false, priced)
}

/// [`find`] for the words of a URL a request writes to, or of an operation it names: a secret's
/// name alone is its change there (`POST /account/password`), and the paths' words count.
pub fn find_in_url(text: &str, extra: &[String]) -> Vec<Found> {
    find_with(text, extra, true, false)
}

/// Whether a `DELETE` (or a `_method=delete`) to a URL removes no data: what it removes
/// (`removed`: the end of its path, see `rule::removed_words`) is one of [`LEAVING`], or the
/// URL (`url_words`) names what the module's rule says is no data. A leaving word further up a
/// path says only where the data lives (Azure's `DELETE /subscriptions/…/virtualMachines/vm1`).
pub fn deletes_no_data(url_words: &str, removed: &str) -> bool {
    let removed = Label::new(removed);
    LEAVING.iter().chain(NOT_SENT).chain(REACTIONS).any(|w| removed.has(w)) || names_no_data(url_words)
}

fn find_with(text: &str, extra: &[String], writes: bool, priced: bool) -> Vec<Found> {
    let label = Label::new(text);
    if label.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let about_no_data = LANGUAGES.iter().any(|l| l.not_data.iter().any(|w| label.has_entry(w)));
    let not_sent = NOT_SENT.iter().chain(REACTIONS).any(|w| label.has(w));
    let not_paid = writes && NOT_PAID.iter().any(|w| label.has(w));
    let a_code = A_CODE.iter().any(|w| label.has_entry(w));
    for language in LANGUAGES {
        let mut push =
            |kind, words: String| found.push(Found { kind: Some(kind), words, language: language.name });
        // The longest entry that matches says most; one per kind and language.
        let longest = |list: &[&'static str]| {
            list.iter().filter(|e| label.has_entry(e)).max_by_key(|e| e.chars().count()).copied()
        };
        if not_paid {
            // A write that checks a price or a code pays nothing (`/transfer/api/preview`).
        } else if let Some(entry) = longest(language.paying) {
            push(Kind::Paying, entry.to_owned());
        } else if let Some(verb) = longest(language.money_verbs)
            .filter(|_| priced)
            // `Back to order (€25.00)` leads to the order: `to` before it makes it no verb.
            .filter(|verb| !label.has(&format!("to {verb}")))
        {
            push(Kind::Paying, format!("{verb} + an amount"));
        }
        if !about_no_data {
            if let Some(entry) = longest(language.deleting) {
                push(Kind::Deleting, entry.to_owned());
            }
        }
        if let Some(entry) = longest(language.secrets) {
            push(Kind::Secrets, entry.to_owned());
        } else if let (Some(noun), Some(change)) =
            (longest(language.secret_nouns), longest(language.secret_changes))
        {
            push(Kind::Secrets, format!("{noun} + {change}"));
        } else if let Some(noun) = longest(language.secret_nouns).filter(|_| writes) {
            push(Kind::Secrets, noun.to_owned());
        }
        // In a URL, `post` and `reply` are nouns (`/post_actions`): there the paths' own words
        // say sending and sharing. What is put in a cart or a filter is sent to no one (`In
        // winkelwagen plaatsen`, as `Bestelling plaatsen` orders and `Reactie plaatsen` posts).
        if !not_sent && !writes {
            if let Some(entry) = longest(language.sending).filter(|_| !about_no_data && !a_code) {
                push(Kind::Sending, entry.to_owned());
            }
            if let Some(entry) = longest(language.sharing) {
                push(Kind::Sharing, entry.to_owned());
            }
        }
    }
    if writes {
        let restores = RESTORED.iter().any(|w| label.has(w));
        for (kind, words) in URL_WORDS {
            let skip = match kind {
                Kind::Paying => not_paid,
                Kind::Deleting => about_no_data || restores,
                Kind::Sending => not_sent || a_code,
                Kind::Sharing => not_sent,
                _ => false,
            };
            if let Some(entry) = words.iter().find(|e| label.has(e)).filter(|_| !skip) {
                found.push(Found { kind: Some(*kind), words: (*entry).to_owned(), language: "URL" });
            }
        }
    }
    for word in extra {
        if label.has_entry(word) {
            found.push(Found { kind: None, words: word.clone(), language: "your policy" });
        }
    }
    // The same words listed by two languages (`pagar`, `2fa`) are said once; words inside a
    // longer entry of another kind are that entry's (`send` in `send money`, `transfer` in
    // `transfer ownership`), and a verb next to an amount pays rather than sends.
    let inside_another = |f: &Found, all: &[Found]| {
        all.iter().any(|g| {
            g.kind != f.kind
                && g.kind.is_some()
                && f.kind.is_some()
                && ((g.words.chars().count() > f.words.chars().count() && Label::new(&g.words).has(&f.words))
                    || (g.kind == Some(Kind::Paying)
                        && g.words.strip_suffix(" + an amount") == Some(&f.words)))
        })
    };
    let all = found.clone();
    found.retain(|f| !inside_another(f, &all));
    let mut said: Vec<Found> = Vec::new();
    for f in found {
        if !said.iter().any(|s| s.kind == f.kind && s.words == f.words) {
            said.push(f);
        }
    }
    said
}

/// The kinds of form fields whose presence makes sending the form sensitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldKind {
    CardNumber,
    CardSecurityCode,
    CardExpiry,
    BankAccount,
    Password,
    NewPassword,
    OneTimeCode,
}

impl FieldKind {
    pub fn describe(self) -> &'static str {
        match self {
            FieldKind::CardNumber => "card number",
            FieldKind::CardSecurityCode => "card security code",
            FieldKind::CardExpiry => "card expiry date",
            FieldKind::BankAccount => "bank account number",
            FieldKind::Password => "password",
            FieldKind::NewPassword => "new password",
            FieldKind::OneTimeCode => "one-time code",
        }
    }

    /// Money, a new secret, or a sign-in's password or code (which is signing in only when
    /// nothing else the form or request says is sensitive: the rule decides).
    pub fn kind(self) -> Kind {
        match self {
            FieldKind::CardNumber
            | FieldKind::CardSecurityCode
            | FieldKind::CardExpiry
            | FieldKind::BankAccount => Kind::Paying,
            FieldKind::NewPassword => Kind::Secrets,
            FieldKind::Password | FieldKind::OneTimeCode => Kind::SigningIn,
        }
    }
}

/// Names fields carry (their `name`, `id`, label, placeholder), by kind, in the vocabulary's
/// languages. Matched as words of the name, so `card_number`, `cardNumber`-less `cardnumber` and
/// "Card number" all read alike.
const FIELD_NAMES: &[(FieldKind, &[&str])] = &[
    (
        FieldKind::CardNumber,
        &[
            "card number",
            "cardnumber",
            "card no",
            "cc number",
            "ccnumber",
            "cc num",
            "ccnum",
            "credit card",
            "debit card",
            "pan",
            "kartennummer",
            "numéro de carte",
            "número de tarjeta",
            "numero di carta",
            "numero della carta",
            "número do cartão",
            "kaartnummer",
            "numer karty",
            "カード番号",
            "卡号",
            "卡號",
        ],
    ),
    (
        FieldKind::CardSecurityCode,
        &[
            "cvc",
            "cvv",
            "cvv2",
            "csc",
            "cvn",
            "card code",
            "security code",
            "prüfnummer",
            "prüfziffer",
            "kartenprüfnummer",
            "sicherheitscode",
            "cryptogramme",
            "código de seguridad",
            "codice di sicurezza",
            "código de segurança",
            "beveiligingscode",
            "kod cvv",
            "セキュリティコード",
            "安全码",
            "安全碼",
        ],
    ),
    (
        FieldKind::CardExpiry,
        &[
            "expiry",
            "expiration",
            "exp date",
            "cc exp",
            "card expiry",
            "ablaufdatum",
            "gültig bis",
            "date d expiration",
            "fecha de caducidad",
            "fecha de vencimiento",
            "data di scadenza",
            "data de validade",
            "vervaldatum",
            "data ważności",
            "有効期限",
            "有效期",
        ],
    ),
    (
        FieldKind::BankAccount,
        &[
            "iban",
            "bic",
            "swift",
            "account number",
            "routing number",
            "sort code",
            "kontonummer",
            "bankleitzahl",
        ],
    ),
    (
        FieldKind::OneTimeCode,
        &[
            "otp",
            // Microsoft's sign-in (`name="otc"`).
            "otc",
            "totp",
            "2fa",
            "mfa",
            "one time code",
            "one time password",
            "verification code",
            "authentication code",
            "auth code",
            "bestätigungscode",
            "code de vérification",
            "código de verificación",
            "codice di verifica",
            "código de verificação",
            "verificatiecode",
            "kod weryfikacyjny",
            "確認コード",
            "验证码",
            "驗證碼",
        ],
    ),
    (
        FieldKind::Password,
        &[
            "password",
            "passwd",
            "pwd",
            "passphrase",
            "passwort",
            "kennwort",
            "mot de passe",
            "contraseña",
            "senha",
            "wachtwoord",
            "hasło",
            "パスワード",
            "密码",
            "密碼",
        ],
    ),
];

/// What kind of sensitive field this is, if any. `autocomplete` is the page's own statement and
/// is believed first; then an `input type=password`; then the names the field carries.
pub fn field_kind(field: &tabtunnel_wire::gestures::FieldFacts) -> Option<FieldKind> {
    let autocomplete = field.autocomplete.to_lowercase();
    for token in autocomplete.split_whitespace() {
        let kind = match token {
            "cc-number" => FieldKind::CardNumber,
            "cc-csc" => FieldKind::CardSecurityCode,
            "cc-exp" | "cc-exp-month" | "cc-exp-year" => FieldKind::CardExpiry,
            "new-password" => FieldKind::NewPassword,
            "current-password" => FieldKind::Password,
            "one-time-code" => FieldKind::OneTimeCode,
            _ => continue,
        };
        return Some(kind);
    }
    let said = Label::new(&split_identifier(&format!("{} {} {}", field.name, field.id, field.label)));
    let password = |said: &Label| {
        let new = ["new", "neues", "nouveau", "nueva", "nuova", "nova", "nieuw", "nowe", "confirm"]
            .iter()
            .any(|w| said.has(w));
        if new {
            FieldKind::NewPassword
        } else {
            FieldKind::Password
        }
    };
    if field.input_type.eq_ignore_ascii_case("password") {
        return Some(password(&said));
    }
    // Only fields one can type into are named by what they hold (a hidden `csrf` is not).
    if matches!(
        field.input_type.to_lowercase().as_str(),
        "hidden" | "submit" | "button" | "checkbox" | "radio" | "file"
    ) {
        return None;
    }
    match FIELD_NAMES.iter().find(|(_, names)| names.iter().any(|n| said.has(n))).map(|(kind, _)| *kind)? {
        FieldKind::Password => Some(password(&said)),
        kind => Some(kind),
    }
}

/// `cardNumber`, `card_number`, `card-number` and `card[number]` as words: `card number`.
pub fn split_identifier(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        // `cardNumber` → `card Number`; an acronym ends before its last capital when a word
        // follows it (`UFICreateComment` → `UFI Create Comment`).
        let after_lower = previous.is_some_and(|p| p.is_lowercase());
        let ends_acronym =
            previous.is_some_and(|p| p.is_uppercase()) && chars.peek().is_some_and(|n| n.is_lowercase());
        if c.is_uppercase() && (after_lower || ends_acronym) {
            out.push(' ');
        }
        out.push(if c == '_' || c == '-' || c == '[' || c == ']' || c == '.' { ' ' } else { c });
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabtunnel_wire::gestures::FieldFacts;

    fn says(text: &str) -> Vec<Kind> {
        kinds(find(text, &[]))
    }

    fn kinds(found: Vec<Found>) -> Vec<Kind> {
        let mut c: Vec<Kind> = found.into_iter().filter_map(|f| f.kind).collect();
        c.sort();
        c.dedup();
        c
    }

    const PAY: &[Kind] = &[Kind::Paying];
    const DELETE: &[Kind] = &[Kind::Deleting];
    const SECRET: &[Kind] = &[Kind::Secrets];
    const SEND: &[Kind] = &[Kind::Sending];
    const SHARE: &[Kind] = &[Kind::Sharing];
    const NOTHING: &[Kind] = &[];

    #[test]
    fn paying_in_every_language() {
        for label in [
            "Pay €1,240.00",
            "Buy now",
            "Place your order",
            "Confirm payment",
            "Jetzt kaufen",
            "Zahlungspflichtig bestellen",
            "Payer 49,90 €",
            "Passer la commande",
            "Pagar ahora",
            "Finalizar compra",
            "Acquista ora",
            "Conferma ordine",
            "Pagar agora",
            "Finalizar pedido",
            "Nu betalen",
            "Bestelling plaatsen",
            "Zapłać teraz",
            "Kupuję i płacę",
            "注文を確定する",
            "今すぐ購入",
            "立即付款",
            "提交订单",
            "Оплатить 1 240 ₽",
            "Подтвердить заказ",
            "Купить сейчас",
            "Сплатити зараз",
            "Підтвердити замовлення",
            "Задонатити",
            "Şimdi öde",
            "Siparişi onayla",
            "Satın al",
            "결제하기",
            "바로 구매",
            "12,000원 결제하기",
            "Betala nu",
            "Slutför köpet",
            "Lägg bud",
            "Zaplatit nyní",
            "Objednávka zavazující k platbě",
            "Koupit",
            "Bayar sekarang",
            "Buat Pesanan",
            "Beli Langsung",
            "Mua ngay",
            "Đặt hàng",
            "Xác nhận thanh toán",
            "ادفع الآن",
            "تأكيد الطلب",
            "اشتر الآن",
            "Πληρώστε",
            "Υποβολή παραγγελίας",
            "Αγόρασε τώρα",
            "Plătește acum",
            "Plasează comanda",
            "Comandă cu obligație de plată",
            "Maksa nyt",
            "Vahvista tilaus",
            "Osta",
        ] {
            assert_eq!(says(label), PAY, "{label}");
        }
        // Going to the step that pays, choosing how, or asking for a call back pays nothing.
        for label in [
            "Перейти к оплате",
            "Способы оплаты",
            "Ödemeye geç",
            "Ödeme yöntemi",
            "결제 수단 변경",
            "구매하신 상품",
            "주문하신 내역",
            "Gå till kassan",
            "Köpvillkor",
            "Pokračovat k platbě",
            "Lanjut ke pembayaran",
            "Thanh toán",
            "Tiếp tục mua sắm",
            "Chuyển khoản ngân hàng",
            "Συνέχεια στην πληρωμή",
            "Τρόποι πληρωμής",
            "Finalizează comanda",
            "Maksutapa",
            "Siirry kassalle",
            "Заказать звонок",
            "Замовити дзвінок",
            "Převést do PDF",
        ] {
            assert_eq!(says(label), NOTHING, "{label}");
        }
    }

    #[test]
    fn deleting_in_every_language() {
        for label in [
            "Delete this repository",
            "Permanently delete",
            "Close my account",
            "Revoke access",
            "Repository löschen",
            "Supprimer le dépôt",
            "Eliminar repositorio",
            "Elimina il repository",
            "Excluir repositório",
            "Repository verwijderen",
            "Usuń repozytorium",
            "リポジトリを削除",
            "删除仓库",
            "刪除帳戶",
            "Удалить аккаунт",
            "Удалить навсегда",
            "Отозвать доступ",
            "Видалити обліковий запис",
            "Очистити кошик",
            "Hesabı sil",
            "Kalıcı olarak sil",
            "Çöp kutusunu boşalt",
            "계정 삭제",
            "휴지통 비우기",
            "회원 탈퇴",
            "Radera konto",
            "Ta bort",
            "Töm papperskorgen",
            "Smazat účet",
            "Vysypat koš",
            "Odstranit repozitář",
            "Hapus akun",
            "Kosongkan sampah",
            "Cabut akses",
            "Xóa tài khoản",
            "Xoá vĩnh viễn",
            "Thu hồi quyền truy cập",
            "حذف الحساب",
            "احذف",
            "إفراغ سلة المهملات",
            "Διαγραφή λογαριασμού",
            "ΔΙΑΓΡΑΦΗ",
            "Ανάκληση πρόσβασης",
            "Șterge contul",
            "Şterge definitiv",
            "Golește coșul de gunoi",
            "Poista tili",
            "Poista pysyvästi",
            "Tyhjennä roskakori",
        ] {
            assert_eq!(says(label), DELETE, "{label}");
        }
    }

    #[test]
    fn a_secret_changes_when_named_with_a_change_or_named_at_all() {
        for label in [
            "Change password",
            "Update your password",
            "Enable two-factor authentication",
            "Generate new token",
            "Regenerate recovery codes",
            "Passwort ändern",
            "Kennwort zurücksetzen",
            "Modifier le mot de passe",
            "Cambiar contraseña",
            "Cambia password",
            "Alterar senha",
            "Wachtwoord wijzigen",
            "Zmień hasło",
            "パスワードを変更",
            "二段階認証を有効にする",
            "修改密码",
            "Изменить пароль",
            "Смена пароля",
            "Включить двухфакторную аутентификацию",
            "Змінити пароль",
            "Двофакторна автентифікація",
            "Şifreyi değiştir",
            "Şifrenizi sıfırlayın",
            "İki faktörlü doğrulama",
            "비밀번호 변경",
            "비밀번호를 재설정하세요",
            "2단계 인증 사용",
            "Byt lösenord",
            "Ändra lösenordet",
            "Tvåfaktorsautentisering",
            "Změnit heslo",
            "Dvoufázové ověření",
            "Ubah kata sandi",
            "Verifikasi dua langkah",
            "Đổi mật khẩu",
            "Xác minh 2 bước",
            "تغيير كلمة المرور",
            "المصادقة الثنائية",
            "Αλλαγή κωδικού πρόσβασης",
            "Έλεγχος ταυτότητας δύο παραγόντων",
            "Schimbă parola",
            "Coduri de recuperare",
            "Vaihda salasana",
            "Kaksivaiheinen tunnistautuminen",
        ] {
            assert_eq!(says(label), SECRET, "{label}");
        }
        for label in ["Password", "Show password", "Forgot password?", "Passwort", "Mot de passe oublié ?"] {
            assert_eq!(says(label), NOTHING, "{label}: naming a secret alone changes nothing");
        }
        for label in [
            "Пароль",
            "Забыли пароль?",
            "Показать пароль",
            "Забули пароль?",
            "Şifremi unuttum",
            "비밀번호 찾기",
            "암호화폐",
            "Glömt lösenordet?",
            "Ange lösenord",
            "Zapomenuté heslo?",
            "Lupa kata sandi?",
            "Quên mật khẩu?",
            "هل نسيت كلمة المرور؟",
            "Ξέχασες τον κωδικό πρόσβασης;",
            "Εμφάνιση κωδικού πρόσβασης",
            "Ai uitat parola?",
            "Unohditko salasanasi?",
        ] {
            assert_eq!(says(label), NOTHING, "{label}: naming a secret alone changes nothing");
        }
    }

    #[test]
    fn sending_in_every_language() {
        for label in [
            "Send",
            "Post",
            "Publish",
            "Send message",
            "Nachricht senden",
            "Envoyer",
            "Enviar mensaje",
            "Invia",
            "Enviar mensagem",
            "Versturen",
            "Wyślij",
            "送信",
            "发送",
            "Отправить сообщение",
            "Опубликовать",
            "Надіслати",
            "Відповісти",
            "Gönder",
            "Yanıtla",
            "보내기",
            "댓글 등록",
            "Skicka",
            "Publicera",
            "Odeslat zprávu",
            "Odpovědět",
            "Kirim pesan",
            "Balas",
            "Gửi",
            "Trả lời",
            "إرسال",
            "نشر",
            "Αποστολή",
            "Δημοσίευση",
            "Trimite mesajul",
            "Răspunde",
            "Lähetä",
            "Julkaise",
        ] {
            assert_eq!(says(label), SEND, "{label}");
        }
    }

    #[test]
    fn sending_a_one_time_code_is_no_sending() {
        for label in [
            "Send code",
            "Send a new code",
            "Skicka ny kod",
            "Kodu tekrar gönder",
            "Отправить код",
            "验证码发送",
        ] {
            assert_eq!(says(label), NOTHING, "{label}");
        }
        assert_eq!(says("Send message"), SEND);
    }

    #[test]
    fn sharing_in_every_language() {
        for label in [
            "Share",
            "Invite people",
            "Make public",
            "Anyone with the link",
            "Change role",
            "Transfer ownership",
            "Teilen",
            "Partager",
            "Compartir",
            "Condividi",
            "Compartilhar",
            "Delen",
            "Udostępnij",
            "共有",
            "分享",
            "Поделиться",
            "Все, у кого есть ссылка",
            "Поділитися",
            "Запросити",
            "Paylaş",
            "Bağlantıya sahip olan herkes",
            "공유하기",
            "링크가 있는 모든 사용자",
            "Dela",
            "Bjud in",
            "Sdílet",
            "Kdokoli s odkazem",
            "Bagikan",
            "Undang",
            "Chia sẻ",
            "Bất kỳ ai có đường liên kết",
            "مشاركة",
            "أي شخص لديه الرابط",
            "Κοινοποίηση",
            "Κοινή χρήση",
            "Partajează",
            "Oricine are linkul",
            "Jaa",
            "Kaikki, joilla on linkki",
        ] {
            assert_eq!(says(label), SHARE, "{label}");
        }
    }

    #[test]
    fn new_deletions_and_secrets() {
        for label in ["Terminate instance", "Empty trash", "Drop database", "Papierkorb leeren", "清空回收站"]
        {
            assert_eq!(says(label), DELETE, "{label}");
        }
        for label in ["Authorize application", "Change recovery email", "Autoriser"] {
            assert_eq!(says(label), SECRET, "{label}");
        }
    }

    #[test]
    fn trading_top_ups_and_offers_pay_next_to_an_amount() {
        for label in [
            "Sell now",
            "Top up",
            "Add funds",
            "Make an offer",
            "Jetzt verkaufen",
            "Umtauschen",
            "Recharger",
            "Fai un'offerta",
            "Adicionar fundos",
            "Aceito, colocar à venda",
            "Opwaarderen",
            "Doładuj",
            "売却する",
            "充值",
            "Продать",
            "Пополнить",
            "Поповнити",
            "Bakiye yükle",
            "충전하기",
            "Sälj",
            "Dobít",
            "Isi saldo",
            "Nạp tiền",
            "بيع",
            "Πούλησε",
            "Reîncarcă",
            "Myy",
        ] {
            assert_eq!(kinds(find_priced(label, &[], true)), PAY, "{label}");
            assert_eq!(says(label), NOTHING, "{label}: no amount, no payment");
        }
    }

    #[test]
    fn making_public_or_posting_in_dutch_shares_or_sends_and_moving_to_the_trash_deletes() {
        for label in [
            "Public",
            "Switch to public",
            "Öffentlich machen",
            "Publique",
            "Hacer público",
            "Overschakelen naar openbaar",
            "Ustaw jako publiczny",
        ] {
            assert_eq!(says(label), SHARE, "{label}");
        }
        assert_eq!(says("Plaatsen"), SEND);
        assert_eq!(says("Reactie plaatsen"), SEND);
        assert_eq!(says("In winkelwagen plaatsen"), NOTHING, "a cart is sent to no one");
        assert_eq!(says("Bestelling plaatsen"), PAY);
        for label in ["Move to trash", "ゴミ箱に移動", "移至回收站"] {
            assert_eq!(says(label), DELETE, "{label}");
        }
        assert_eq!(says("Create access key"), SECRET);
    }

    #[test]
    fn a_verb_that_moves_money_pays_only_next_to_an_amount() {
        for label in ["Send $25", "Subscribe – $9.99/month", "Abonnieren – 9,99 €/Monat", "Renouveler 49 €"]
        {
            assert_eq!(kinds(find_priced(label, &[], true)), PAY, "{label}");
        }
        assert_eq!(
            find_priced("Send $25", &[], true)[0].describe(),
            "\"send + an amount\" (English: paying)"
        );
        assert_eq!(says("Subscribe"), NOTHING);
        assert_eq!(says("Send"), SEND);
        assert_eq!(kinds(find_priced("Add to cart – €9.99", &[], true)), NOTHING);
        assert_eq!(kinds(find_priced("Request $25.00", &[], true)), NOTHING);
        // A longer entry of another kind wins: money sent is paying, ownership moved is sharing.
        assert_eq!(says("Send money"), PAY);
        assert_eq!(says("Transfer ownership"), SHARE);
    }

    #[test]
    fn new_languages_pay_next_to_an_amount_and_their_look_alikes_do_not() {
        let priced = |label: &str| kinds(find_priced(label, &[], true));
        for label in [
            "Отправить 500 ₽",
            "Надіслати 200 грн",
            "Gönder 50 TL",
            "10,000원 송금",
            "Skicka 200 kr",
            "Poslat 500 Kč",
            "Kirim Rp50.000",
            "Gửi 100.000₫",
            "إرسال 50 ر.س",
            "Πλήρωσε 25 €",
            "Trimite 50 lei",
            "Lähetä 20 €",
        ] {
            assert_eq!(priced(label), PAY, "{label}");
        }
        // A day beside its fare, a way to go on, a change of address: no money moves.
        for label in [
            "Sat 14 Oct €89",
            "Tiến hành thanh toán 250.000₫",
            "Tiếp tục mua sắm 250.000₫",
            "Συνέχεια στην πληρωμή 25 €",
            "Schimbă adresa 25 lei",
            "Vaihda toimitustapa 5,90 €",
            "구매 후기 12,000원",
            "Продовжити 199 грн",
            "Lataa 20 €",
        ] {
            assert_eq!(priced(label), NOTHING, "{label}");
        }
    }

    #[test]
    fn urls_and_operations_name_the_new_kinds() {
        let url = |text: &str| kinds(find_in_url(&split_identifier(text), &[]));
        assert_eq!(url(" api v1 p2p transfers "), PAY);
        assert_eq!(url(" instances i 1 terminate "), DELETE);
        assert_eq!(url(" trash empty "), DELETE);
        assert_eq!(url("dropDatabase"), DELETE);
        assert_eq!(url(" messages send "), SEND);
        assert_eq!(url(" api v1 statuses "), SEND);
        assert_eq!(url(" docs 7 share "), SHARE);
        assert_eq!(url(" repo visibility "), SHARE);
        assert_eq!(url(" org invitations "), SHARE);
        assert_eq!(url(" threads 4 reply "), SEND);
        assert_eq!(url(" auction 9 bids "), PAY);
        assert_eq!(url(" post actions "), NOTHING, "a post is a noun in a path");
        assert_eq!(url(" oauth authorize "), SECRET);
        assert_eq!(url("accounts/8a2f/sells"), PAY);
        assert_eq!(url("recurring-buys"), PAY);
        assert_eq!(url("topups/card"), PAY);
        assert_eq!(url("steamaccount/addfunds"), PAY);
        assert_eq!(url("accounts/set_public/"), SHARE);
        assert_eq!(url("direct_v2/threads/broadcast/text/"), SEND);
        assert_eq!(url("broadcasting/auth"), NOTHING, "Laravel Echo's sign-in to its channels");
        assert_eq!(url("api/conversions"), NOTHING, "an ad's conversion is no payment");
        assert_eq!(url("h5/mtop.aliexpress.checkout.placeorder/1.0/"), PAY);
        assert_eq!(url("api/5/checkout/buynow"), PAY);
        assert_eq!(url("bidding/offers/13300/bid"), PAY);
        assert_eq!(url("api/v3/order/place"), PAY);
        assert_eq!(url("api/orders/5/addOrderNote"), NOTHING, "a note on an order");
        assert_eq!(url("v1/projects/p/subscriptions/createSubscription"), NOTHING, "a Pub/Sub one");
        assert_eq!(url("account/close-banner"), NOTHING);
        assert_eq!(url("api/p24/mobile/topup"), PAY);
        assert_eq!(url("api/v1/billing/subscribe"), PAY);
        assert_eq!(url("api/v4/order/buyer_cancel_order"), DELETE);
        assert_eq!(url("h5/mtop.lazada.om.order.cancel/1.0/"), DELETE);
        assert_eq!(url("api/talk/thrift/Talk/TalkService/unsendMessage"), DELETE);
        assert_eq!(url("closeaccount.aspx"), DELETE);
        assert_eq!(url("proofs/EnableTfa"), SECRET);
        assert_eq!(url("api/v4/rating/submit_rating"), SEND);
        assert_eq!(url("api/v1/newsletter/subscribe"), NOTHING, "a newsletter is free");
        assert_eq!(url("api/orders/5/cancel-reasons"), NOTHING);
        assert_eq!(url("consumer/account/deletion-requests"), DELETE);
        assert_eq!(url("records/modify forceDelete"), DELETE);
        assert_eq!(url("consumer/account/deletion-requests/restore"), NOTHING, "taken back");
        assert_eq!(url("remote.php/dav/trashbin/alice/trash/a.pdf"), NOTHING, "a trash is a place");
        assert_eq!(url("storageAccounts/st/regenerateKey"), SECRET);
        assert_eq!(url("storageAccounts/st/listKeys"), SECRET);
        assert_eq!(url("admin/developers/api_token/show"), SECRET);
        assert_eq!(url("accounts/6002/security/apppasswords"), SECRET);
        assert_eq!(url("user/account/email/change"), SECRET);
        assert_eq!(url("myaccount/transfer/api/preview"), NOTHING, "a transfer previewed");
        assert_eq!(url("purchase/coupons/validation"), NOTHING, "a coupon checked");
        assert_eq!(url("api/otp/send"), NOTHING, "a code sent to the human");
        assert_eq!(url("messages/send"), SEND);
        assert_eq!(url("gateway/api/graphql?operation=CreateComment"), SEND);
        assert_eq!(url("h5/mtop.aliexpress.feedback.submit/1.0/"), SEND);
        assert_eq!(url("h5/mtop.aliexpress.dispute.create/1.0/"), SEND);
        assert_eq!(url("2.0/collaborations/c-88"), SHARE);
        assert_eq!(url("api/1.0/memberships/m-882"), SHARE);
        assert_eq!(url("add_users_to_board"), SHARE);
        assert_eq!(url("boards/4410/shareable_link"), SHARE);
        assert_eq!(url("api/accounts/6002/settings/forwarding"), SHARE);
        // Reactions, drafts and reading are no sending; a cart emptied is no deletion.
        for harmless in
            [" api v1 statuses 1 favourite ", " drafts 3 send ", " cart empty ", " messages 9 read "]
        {
            assert_eq!(url(harmless), NOTHING, "{harmless}");
        }
        let no_data = |words: &str| deletes_no_data(words, words);
        assert!(no_data(" users sign out "));
        assert!(no_data(" cart items 3 "));
        assert!(no_data(" user starred acme rocket "));
        assert!(no_data(" api notifications 5 "));
        assert!(!no_data(" api v1 volumes vol 99 "));
        assert!(deletes_no_data(" api cart 7 line items 9 ", " line items 9 "), "a cart anywhere");
        assert!(!deletes_no_data(" subscriptions 5 virtual machines vm1 ", " virtual machines vm1 "));
    }

    #[test]
    fn thai_matches_anywhere_with_its_tone_marks_and_persian_by_words() {
        // Thai: no spaces, and tone marks (not letters for Rust) inside its words.
        for (label, kind) in [
            ("ยืนยันการชำระเงิน", PAY),
            ("สั่งซื้อเลย", PAY),
            ("ลบบัญชีของฉัน", DELETE),
            ("เปลี่ยนรหัสผ่าน", SECRET),
            ("ส่งข้อความ", SEND),
            ("แชร์", SHARE),
            // Persian: a zero-width non-joiner cuts a word as a space does.
            ("تأیید و پرداخت", PAY),
            ("ثبت سفارش", PAY),
            ("حذف حساب کاربری", DELETE),
            ("تغییر رمز عبور", SECRET),
            ("ارسال پیام", SEND),
            ("اشتراک\u{200c}گذاری", SHARE),
            ("اشتراک گذاری", SHARE),
        ] {
            assert_eq!(says(label), kind, "{label}");
        }
        // Search, add to cart, go to checkout, open an account, remove a filter; shipping.
        for label in [
            "ค้นหา",
            "ใส่ตะกร้า",
            "ดำเนินการชำระเงิน",
            "เปิดบัญชี",
            "ล้างตัวกรอง",
            "جستجو",
            "افزودن به سبد خرید",
            "هزینه ارسال",
        ] {
            assert_eq!(says(label), NOTHING, "{label}");
        }
        // Their money verbs pay next to an amount in their own digits and currencies.
        let priced = |label: &str| {
            kinds(find_priced(label, &[], !crate::gestures::rule::amounts(label, 1).is_empty()))
        };
        assert_eq!(priced("پرداخت ۱۲۰٬۰۰۰ تومان"), PAY);
        assert_eq!(priced("پرداخت"), NOTHING);
        // A tone mark is part of its word: `ส่ง` (send) is not `สง`.
        assert!(Label::new("ส่งข้อความ").has("ส่งข้อความ"));
        assert!(!Label::new("สงข้อความ").has("ส่งข้อความ"));
    }

    #[test]
    fn harmless_look_alikes_are_not_held() {
        for label in [
            "Add to cart",
            "Add to basket",
            "In den Warenkorb",
            "Ajouter au panier",
            "Añadir al carrito",
            "Aggiungi al carrello",
            "Adicionar ao carrinho",
            "In winkelwagen",
            "Dodaj do koszyka",
            "カートに入れる",
            "加入购物车",
            "Checkout",
            "Proceed to checkout",
            "Continue to payment",
            "Remove filter",
            "Remove",
            "Remove from cart",
            "Clear all filters",
            "Filter löschen",
            "Supprimer le filtre",
            "Eliminar filtro",
            "Eliminar del carrito",
            "Rimuovi filtro",
            "Elimina dal carrello",
            "Excluir filtro",
            "Filter verwijderen",
            "Usuń filtr",
            "フィルターを削除",
            "清除筛选",
            "Search",
            "Next",
            "Weiter",
            "Suivant",
            "Siguiente",
            "Avanti",
            "Próximo",
            "Volgende",
            "Dalej",
            "次へ",
            "下一页",
            "Sort order",
            "Order by price",
            "Cancel",
            "Sign in",
            "Reset",
            "Subscribe to our newsletter",
            "Purchase history",
            "Create Pin",
            "通知を無効にする",
            "清除缓存",
            // Russian and Ukrainian.
            "В корзину",
            "Удалить из корзины",
            "Удалить фильтр",
            "Сбросить фильтры",
            "Поиск",
            "Отмена",
            "Продолжить",
            "Нравится",
            "Сохранить черновик",
            "Удалённый доступ",
            "Перевести на русский",
            "Публичная оферта",
            "Додати в кошик",
            "Видалити з кошика",
            "Видалити фільтр",
            "Пошук",
            "Скасувати",
            "Продовжити",
            "Подобається",
            "Зберегти чернетку",
            // Turkish.
            "Sepete ekle",
            "Sepetten sil",
            "Filtreyi sil",
            "Aramayı sil",
            "Ara",
            "İptal",
            "Devam et",
            "Beğen",
            "Taslağı kaydet",
            "Gönderiler",
            "Silikon kılıf",
            "Satıcıya sor",
            // Korean.
            "장바구니 담기",
            "장바구니에서 삭제",
            "필터 삭제",
            "검색어 삭제",
            "검색",
            "취소",
            "계속",
            "좋아요",
            "임시저장",
            "삭제된 항목",
            "비공개",
            "내보내기",
            "게시물",
            // Swedish.
            "Lägg i varukorgen",
            "Ta bort från varukorgen",
            "Ta bort filter",
            "Sök",
            "Avbryt",
            "Fortsätt",
            "Gilla",
            "Spara utkast",
            "Ta bort sökningen",
            // Czech.
            "Přidat do košíku",
            "Odstranit z košíku",
            "Smazat filtry",
            "Hledat",
            "Zrušit",
            "Pokračovat",
            "To se mi líbí",
            "Uložit koncept",
            // Indonesian.
            "Tambah ke keranjang",
            "Hapus dari keranjang",
            "Hapus filter",
            "Cari",
            "Batal",
            "Lanjutkan",
            "Suka",
            "Simpan draf",
            "Komentar (3)",
            // Vietnamese.
            "Thêm vào giỏ hàng",
            "Xóa khỏi giỏ hàng",
            "Xóa bộ lọc",
            "Tìm kiếm",
            "Hủy",
            "Tiếp tục",
            "Thích",
            "Lưu bản nháp",
            "Đăng nhập",
            "Đăng ký",
            "Đăng xuất",
            // Arabic.
            "أضف إلى السلة",
            "حذف من السلة",
            "حذف الفلتر",
            "بحث",
            "إلغاء",
            "متابعة",
            "إعجاب",
            "حفظ المسودة",
            "عام",
            // Greek.
            "Προσθήκη στο καλάθι",
            "Διαγραφή από το καλάθι",
            "Διαγραφή φίλτρων",
            "Αναζήτηση",
            "Ακύρωση",
            "Συνέχεια",
            "Μου αρέσει",
            "Αποθήκευση πρόχειρου",
            // Romanian.
            "Adaugă în coș",
            "Șterge din coș",
            "Șterge filtrele",
            "Caută",
            "Anulează",
            "Continuă",
            "Îmi place",
            "Salvează ciorna",
            // Finnish.
            "Lisää ostoskoriin",
            "Poista ostoskorista",
            "Poista suodattimet",
            "Poista valinta",
            "Poista suosikeista",
            "Hae",
            "Peruuta",
            "Jatka",
            "Tykkää",
            "Tallenna luonnos",
            "Lataa",
        ] {
            assert_eq!(says(label), NOTHING, "{label}");
        }
    }

    #[test]
    fn words_match_whole_not_inside_others() {
        assert_eq!(says("Paypal"), NOTHING, "pay inside a word");
        assert_eq!(says("Display settings"), NOTHING);
        assert_eq!(says("Undelete"), NOTHING);
        assert_eq!(says("PAY"), PAY, "any case");
        assert_eq!(says("pay-now"), PAY, "punctuation cuts words");
        assert_eq!(says("  Delete\n  repository "), DELETE);
        assert_eq!(says(""), NOTHING);
    }

    #[test]
    fn a_policy_adds_words_and_stems() {
        let extra = vec!["ship it".to_owned(), "launch*".to_owned(), "発射".to_owned()];
        assert_eq!(find("Ship it!", &extra)[0].language, "your policy");
        assert_eq!(find("Launching now", &extra).len(), 1);
        assert_eq!(find("ロケットを発射", &extra).len(), 1);
        assert!(find("Shipping", &extra).is_empty());
        // Added words add; the built-in ones stay.
        assert_eq!(find("Pay", &extra).len(), 1);
    }

    #[test]
    fn found_words_say_where_they_come_from() {
        let found = find("Zapłać teraz", &[]);
        assert_eq!(found[0].describe(), "\"zapłać teraz\" (Polish: paying)");
        let found = find("Passwort ändern", &[]);
        assert_eq!(found[0].describe(), "\"passwort + ändern\" (German: changing a secret)");
        assert_eq!(find("Launch", &["launch".to_owned()])[0].describe(), "\"launch\" (your policy)");
    }

    fn field(input_type: &str, autocomplete: &str, name: &str, label: &str) -> FieldFacts {
        FieldFacts {
            input_type: input_type.into(),
            autocomplete: autocomplete.into(),
            name: name.into(),
            id: String::new(),
            label: label.into(),
        }
    }

    #[test]
    fn fields_are_known_by_autocomplete_type_or_name() {
        use FieldKind::*;
        for (f, kind) in [
            (field("text", "cc-number", "x", ""), Some(CardNumber)),
            (field("text", "billing cc-csc", "x", ""), Some(CardSecurityCode)),
            (field("text", "cc-exp-month", "", ""), Some(CardExpiry)),
            (field("password", "", "pw", ""), Some(Password)),
            (field("password", "new-password", "pw", ""), Some(NewPassword)),
            (field("password", "", "new_password", ""), Some(NewPassword)),
            (field("text", "one-time-code", "", ""), Some(OneTimeCode)),
            (field("text", "", "cardNumber", ""), Some(CardNumber)),
            (field("tel", "", "card[number]", ""), Some(CardNumber)),
            (field("text", "", "x", "Kartennummer"), Some(CardNumber)),
            (field("text", "", "cvc", ""), Some(CardSecurityCode)),
            (field("text", "", "", "Código de seguridad"), Some(CardSecurityCode)),
            (field("text", "", "iban", ""), Some(BankAccount)),
            (field("text", "", "otp_code", ""), Some(OneTimeCode)),
            (field("text", "", "", "カード番号"), Some(CardNumber)),
            (field("search", "", "q", "Search"), None),
            (field("text", "", "company", ""), None),
            (field("text", "", "panel", ""), None),
            (field("hidden", "", "card_number", ""), None),
            (field("email", "email", "email", "Email"), None),
        ] {
            assert_eq!(field_kind(&f), kind, "{f:?}");
        }
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(split_identifier("cardNumber"), "card Number");
        assert_eq!(split_identifier("card_number[0]"), "card number 0 ");
        assert_eq!(split_identifier("new-password"), "new password");
        assert_eq!(
            split_identifier("useCometUFICreateCommentMutation"),
            "use Comet UFI Create Comment Mutation"
        );
        assert_eq!(split_identifier("HTTPServer"), "HTTP Server");
        assert_eq!(split_identifier("DELETE"), "DELETE");
    }

    #[test]
    fn refunds_legal_order_buttons_contributions_and_tokens() {
        assert_eq!(kinds(find_priced("Refund $120.00", &[], true)), PAY);
        assert_eq!(says("Ordine con obbligo di pagamento"), PAY);
        assert_eq!(says("Confirm plan change"), PAY);
        assert_eq!(kinds(find_priced("Contribute $10.00 USD", &[], true)), PAY);
        assert_eq!(says("Contribute"), NOTHING, "no amount, no money");
        assert_eq!(kinds(find_priced("Back", &[], true)), NOTHING, "a Back button moves no money");
        assert_eq!(kinds(find_priced("Back to order (€25.00)", &[], true)), NOTHING);
        assert_eq!(says("Refund policy"), NOTHING, "a link to a policy");
        assert_eq!(says("Show refund options"), NOTHING);
        assert_eq!(says("Create token"), SECRET);
        assert_eq!(says("Comment"), SEND);
        assert_eq!(says("Comments (3)"), NOTHING);
        assert!(is_reaction(" user stars dashboard uid pay ovw "));
        assert!(!is_reaction(" dashboards uid pay ovw public dashboards "));
    }
}
