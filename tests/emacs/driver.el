;;; driver.el --- drives a real Emacs eglot against `takeback serve' (tests/emacs/test_eglot.py)
;;
;; eglot asks "Server wants to edit … Proceed?" before every workspace/applyEdit; the person's
;; answers are taken from `tb-answers' in turn.  Batch Emacs runs no idle timers, so eglot's
;; didChange (sent after 0.5 s idle) is sent by `tb-idle', as the idle timer would.
;; Results go to $TAKEBACK_TEST_OUT as a JSON object.

(require 'eglot)
(require 'json)
(setq eglot-sync-connect t)
(add-to-list 'eglot-server-programs '((python-mode) . ("takeback" "serve")))

(defvar tb-root default-directory)
(defvar tb-result nil)
(defvar tb-answers nil "What the person answers to eglot's prompts, in turn.")

(defun tb-path (rel) (expand-file-name rel tb-root))
(defun tb-note (key value) (setq tb-result (append tb-result (list (cons key value)))))
(defun tb-text (rel)
  (with-current-buffer (find-file-noselect (tb-path rel))
    (buffer-substring-no-properties (point-min) (point-max))))
(defun tb-uri (rel) (eglot--path-to-uri (tb-path rel)))
(defun tb-range (l1 c1 l2 c2) `(:start (:line ,l1 :character ,c1) :end (:line ,l2 :character ,c2)))

(advice-add 'y-or-n-p :override
            (lambda (&rest _) (let ((answer (pop tb-answers))) (tb-note "asked" (if answer "yes" "no")) answer)))

(defun tb-idle ()
  "What eglot's idle timer does: send each buffer's pending changes."
  (dolist (buffer (eglot--managed-buffers (eglot--current-server-or-lose)))
    (with-current-buffer buffer (eglot--signal-textDocument/didChange))))

(defun tb-wait (predicate seconds)
  "Handle the server's messages until PREDICATE holds or SECONDS pass."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.1))))

(defun tb-request (method params)
  "A request, answered as its result or (:error CODE MESSAGE)."
  (condition-case err
      (jsonrpc-request (eglot--current-server-or-lose) method params)
    (jsonrpc-error
     (list :error (alist-get 'jsonrpc-error-code (cdr err)) (alist-get 'jsonrpc-error-message (cdr err))))))

(condition-case err
    (progn
      (find-file (tb-path "src/app.py"))
      (call-interactively #'eglot)
      (find-file (tb-path "src/util.py"))
      (set-buffer (find-file-noselect (tb-path "src/app.py")))
      (let ((edit `(:changes (,(intern (concat ":" (tb-uri "src/app.py"))) [(:range ,(tb-range 1 11 1 12) :newText "10")]
                              ,(intern (concat ":" (tb-uri "src/util.py"))) [(:range ,(tb-range 1 15 1 16) :newText "3")]))))
        ;; 1. The person answers "no" to the agent's edit: eglot answers with an error.
        (setq tb-answers (list nil))
        (tb-note "refused" (tb-request :takeback/applyEdit `(:label "return ten" :edit ,edit)))
        (tb-note "app_after_no" (tb-text "src/app.py"))
        (tb-note "util_after_no" (tb-text "src/util.py"))
        ;; 2. "yes": both buffers change.
        (setq tb-answers (list t))
        (tb-note "applied" (tb-request :takeback/applyEdit `(:label "return ten" :edit ,edit)))
        (tb-idle)
        ;; 3. The person types in util.py; eglot has not sent it when the undo comes, so the
        ;; undo's edit of util.py is for a stale version: eglot applies app.py, then fails.
        (with-current-buffer (find-file-noselect (tb-path "src/util.py"))
          (goto-char (point-max))
          (insert "# typed\n"))
        (setq tb-answers (list t t))
        (tb-note "undo" (tb-request :takeback/undo '(:onConflict "abort")))
        (tb-note "app_right_after_undo" (tb-text "src/app.py"))
        ;; 4. The person is idle: eglot reports what it holds; the server takes app.py back.
        (tb-idle)
        (tb-wait (lambda () (string-match-p "return 10" (tb-text "src/app.py"))) 15)
        (tb-idle)
        (tb-note "app_after_take_back" (tb-text "src/app.py"))
        (tb-note "util_after_take_back" (tb-text "src/util.py"))
        (tb-note "timeline" (tb-request :takeback/timeline (quote (:limit 10))))
        (when (getenv "TB_EVENTS")  ; the messages both ways, to debug
          (tb-note "events" (with-current-buffer (jsonrpc-events-buffer (eglot--current-server-or-lose))
                              (buffer-substring-no-properties (point-min) (point-max)))))))
  (error (tb-note "error" (format "%S" err))))

(with-temp-file (getenv "TAKEBACK_TEST_OUT") (insert (json-encode tb-result)))
(kill-emacs 0)
